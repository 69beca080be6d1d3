// The demo team, its key and its dashboard user, as `npm run demo` and `npm run cluster` set
// them up: the team is created once with 1,000 credits; each start revokes the demo keys of
// earlier starts and creates a new one, and gives a new link to set the demo user's password.
import { issuePasswordLink } from './account/users.ts';
import { generateKey } from './server/keys.ts';
import type { Stores, Team } from './store/types.ts';

/** The demo team's dashboard user (an owner). */
export const DEMO_EMAIL = 'demo@example.com';

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

/** The demo user (created once) and a new one-time link, on `baseUrl`, that sets its password. */
export async function demoUserLink(stores: Stores, team: Team, baseUrl: string): Promise<string> {
  const user =
    (await stores.users.listUsers(team.id)).find((candidate) => candidate.email === DEMO_EMAIL) ??
    (await stores.users.createUser({ teamId: team.id, email: DEMO_EMAIL, role: 'owner' }));
  return issuePasswordLink(stores.users, user.id, baseUrl, Date.now());
}
