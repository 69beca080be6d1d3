// When a monitor runs: every interval (a duration: "30s", "15m", "6h", "1d"), or at the times of
// a cron expression (croner) in an IANA time zone. A run's next slot is computed from the time
// it ends, so that slots missed while no process ran collapse into the one run that follows.
import { Cron } from 'croner';
import type { MonitorSchedule } from '../../store/types.ts';

const UNIT_SECONDS = { s: 1, m: 60, h: 3_600, d: 86_400 } as const;
/** A duration: a whole number and a unit. */
export const DURATION_PATTERN = '^[1-9][0-9]{0,6}(s|m|h|d)$';
const DURATION = new RegExp(DURATION_PATTERN);
/** The longest interval: 365 days. */
export const MAX_INTERVAL_S = 365 * 86_400;
/** Cron times checked for the shortest gap between two runs. */
const CRON_LOOKAHEAD = 50;

/** `"15m"` → 900; null when it is not a duration. */
export function durationSeconds(text: string): number | null {
  if (!DURATION.test(text)) return null;
  return Number(text.slice(0, -1)) * UNIT_SECONDS[text.slice(-1) as keyof typeof UNIT_SECONDS];
}

/** 900 → `"15m"`: the largest unit that divides it. */
export function durationText(seconds: number): string {
  for (const unit of ['d', 'h', 'm'] as const) if (seconds % UNIT_SECONDS[unit] === 0) return `${seconds / UNIT_SECONDS[unit]}${unit}`;
  return `${seconds}s`;
}

export function validTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function cronOf(expression: string, timezone: string): Cron {
  return new Cron(expression, { timezone, paused: true });
}

/** What is wrong with a cron expression in `timezone` under a minimum gap of `minSeconds`; null when nothing is. */
export function cronProblem(expression: string, timezone: string, minSeconds: number, now: number): string | null {
  let cron: Cron;
  try {
    cron = cronOf(expression, timezone);
  } catch (error) {
    return `Is not a cron expression (${error instanceof Error ? error.message.replace(/^CronPattern: /, '') : 'invalid'})`;
  }
  const times = cron.nextRuns(CRON_LOOKAHEAD, new Date(now)).map((date) => date.getTime());
  if (times.length === 0) return 'Never runs';
  for (let i = 1; i < times.length; i++) {
    if ((times[i] as number) - (times[i - 1] as number) < minSeconds * 1000) return `Runs more often than the minimum interval of ${durationText(minSeconds)}`;
  }
  return null;
}

/**
 * The first slot after `now`. An interval keeps the phase of `slot` (the one just run): the
 * next slot on the same grid after `now`, however many were missed; a cron expression its next
 * time after `now`.
 */
export function nextSlot(schedule: MonitorSchedule, now: number, slot: number = now): number {
  if (schedule.interval !== null) {
    const step = schedule.interval * 1000;
    if (slot > now) return slot;
    return slot + (Math.floor((now - slot) / step) + 1) * step;
  }
  const next = cronOf(schedule.cron, schedule.timezone).nextRun(new Date(now));
  // An expression that never runs again (a date in the past): a year on, checked again then.
  return next ? next.getTime() : now + MAX_INTERVAL_S * 1000;
}
