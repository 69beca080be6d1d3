// The demo team and its key, as `npm run demo` and `npm run cluster` set them up: the team is
// created once with 1,000 credits; each start revokes the demo keys of earlier starts and
// creates a new one.
import { generateKey } from './server/keys.ts';
import type { Stores, Team } from './store/types.ts';

const DEMO_TEAM = 'demo';
const DEMO_CREDITS = 1000;
/** Names of the keys the demo creates: `demo <ISO time>`. */
const DEMO_KEY_PREFIX = 'demo ';

export async function demoTeam(stores: Stores): Promise<Team> {
  const teams = await stores.accounts.listTeams();
  return teams.find((candidate) => candidate.name === DEMO_TEAM) ?? (await stores.accounts.createTeam({ name: DEMO_TEAM, credits: DEMO_CREDITS, rateLimit: 100 }));
}

/** Revokes the demo keys of earlier starts and creates this start's key; returns it. */
export async function rotateDemoKey(stores: Stores, team: Team): Promise<string> {
  for (const key of await stores.accounts.listKeys(team.id)) {
    if (key.revokedAt === null && key.name.startsWith(DEMO_KEY_PREFIX)) await stores.accounts.revokeKey(key.id);
  }
  const generated = generateKey();
  await stores.accounts.createKey({ teamId: team.id, name: `${DEMO_KEY_PREFIX}${new Date().toISOString()}`, hash: generated.hash, prefix: generated.prefix, last4: generated.last4 });
  return generated.key;
}
