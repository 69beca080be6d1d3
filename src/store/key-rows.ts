// A key's daily credit limit and spending as both stores read them (the same columns in SQLite and PostgreSQL).
import type { ApiKeyRecord } from './types.ts';

type Row = Record<string, unknown>;

export const keyLimits = (r: Row): Pick<ApiKeyRecord, 'dailyCreditLimit' | 'spent'> => ({
  dailyCreditLimit: r.daily_credit_limit === null || r.daily_credit_limit === undefined ? null : Number(r.daily_credit_limit),
  spent: typeof r.spent_day === 'string' ? { day: r.spent_day, credits: Number(r.spent) } : null,
});
