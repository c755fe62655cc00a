/** One scrape's exposition (issue 36): the stored counters and the gauges of the status view, as text. Pure. */
import type { CounterRow } from "./counters.js"
import { counterFamilies } from "./counterFamilies.js"
import { renderExposition } from "./exposition.js"
import { gaugeFamilies, type GaugeInput } from "./gauges.js"

export interface ScrapeInput extends GaugeInput {
  readonly counters: ReadonlyArray<CounterRow>
}

/** The exposition of one read: every counter and gauge family, sorted by name. */
export const scrapeText = (input: ScrapeInput): string => renderExposition([...counterFamilies(input.counters), ...gaugeFamilies(input)])
