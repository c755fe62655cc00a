/**
 * Budgets a provider will tell when asked (issue 35, US-48): each config hook hands opencode's config to
 * the budget reads, which find each provider's API key there (never logged); the reads themselves run on
 * the layer's timer (layers/quota/KeyBudgetsShell.ts).
 */
import type { JsonRecord } from "../../core/json.js"
import type { KeyBudgetsService } from "../../services/quota/KeyBudgets.js"
import type { Parts, Runner } from "./runner.js"

/** The config hook's part: after the config part, which ends the call for an object that cannot be worked on. */
export const keyBudgetHooks = (r: Runner, budgets: KeyBudgetsService): Parts => ({
  config: (input) => r.run(budgets.configure(input as JsonRecord), "budget reads")
})
