/**
 * The timeline's aggregation thresholds, shared by the static SVG (timelineHtml.ts) and the page's
 * script (src/web/timeline.ts, bundled into the page). Pure.
 */

/** More visible bars than this and the page (and the SVG) draws per-pixel aggregates instead. */
export const AGGREGATE_BARS = 4000
/** The same for cooldown spans (counted once per lane they cover) and for marks. */
export const AGGREGATE_COOLS = 2000
export const AGGREGATE_MARKS = 2000
