// Epoch milliseconds → ISO 8601 UTC with milliseconds, exactly as `Date#toISOString` writes it,
// without going through a `Date` for years 0000 to 9999 (V8's `toISOString` is a slow runtime
// call, and a large page holds hundreds of timestamps). Other values go through `Date`.
// (The same file serves snapmsg and linkpage-a.)

const DAY_MS = 86_400_000;
/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z. */
const FIRST = -62_167_219_200_000;
const LAST = 253_402_300_799_999;
/** Days from 0000-03-01 to 1970-01-01, plus one 400-year era so that every day count below is positive. */
const DAYS_BEFORE_EPOCH = 719_468 + 146_097;

/** `"00"` to `"99"`, and `"000"` to `"999"`. */
const TWO = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));
const THREE = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, '0'));

/** The last time converted: a page often repeats one (an update time equal to the creation time). */
let lastMs = NaN;
let lastIso = '';

/** `new Date(epochMs).toISOString()`, or null for an invalid date (where `toISOString` would throw). */
export function isoString(epochMs: number): string | null {
  if (epochMs === lastMs) return lastIso;
  if (!Number.isInteger(epochMs) || epochMs < FIRST || epochMs > LAST) {
    const date = new Date(epochMs);
    return Number.isNaN(date.getTime()) ? null : date.toISOString();
  }
  const days = Math.floor(epochMs / DAY_MS);
  let rest = epochMs - days * DAY_MS; // 0 to 86 399 999
  // Civil date from a day count (H. Hinnant, "chrono-compatible low-level date algorithms"),
  // with the year starting on 1 March; every value is a small non-negative integer.
  const shifted = days + DAYS_BEFORE_EPOCH;
  const era = (shifted / 146_097) | 0;
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = ((dayOfEra - ((dayOfEra / 1460) | 0) + ((dayOfEra / 36_524) | 0) - ((dayOfEra / 146_096) | 0)) / 365) | 0;
  const dayOfYear = dayOfEra - (365 * yearOfEra + ((yearOfEra / 4) | 0) - ((yearOfEra / 100) | 0));
  const monthIndex = ((5 * dayOfYear + 2) / 153) | 0;
  const day = dayOfYear - (((153 * monthIndex + 2) / 5) | 0) + 1;
  const month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9;
  const year = yearOfEra + (era - 1) * 400 + (month <= 2 ? 1 : 0);
  const hours = (rest / 3_600_000) | 0;
  rest -= hours * 3_600_000;
  const minutes = (rest / 60_000) | 0;
  rest -= minutes * 60_000;
  const seconds = (rest / 1000) | 0;
  lastMs = epochMs;
  lastIso = `${TWO[(year / 100) | 0]}${TWO[year % 100]}-${TWO[month]}-${TWO[day]}T${TWO[hours]}:${TWO[minutes]}:${TWO[seconds]}.${THREE[rest - seconds * 1000]}Z`;
  return lastIso;
}
