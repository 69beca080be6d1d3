// The dashboard's Users page (owners and operators): the team's users, add one (a set-password
// link shown once), disable one.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { issuePasswordLink, mayGrant, userActionProblem } from '../account/users.ts';
import { normaliseEmail } from '../store/rules.ts';
import type { User } from '../store/types.ts';
import { html, notice, PageError, table, type Html } from './html.ts';
import { copyField, SIGNED_IN_FORM, time, type PageTools, type Scope } from './signed-in.ts';

export function userPages(app: FastifyInstance, { stores, now, scopeOf, show, csrfField, teamLine }: PageTools, baseUrl: () => string): void {
  async function manager(request: FastifyRequest): Promise<Scope> {
    const scope = await scopeOf(request);
    if (scope.user.role === 'member') throw new PageError(403, "Only an owner manages the team's users.");
    return scope;
  }

  async function usersPage(request: FastifyRequest, reply: FastifyReply, top: Html | null, status = 200) {
    const scope = await manager(request);
    const users = await stores.users.listUsers(scope.team.id);
    return show(
      reply,
      scope,
      'Overview',
      'Users',
      html`${top}${teamLine(scope)}
        <form method="post" action="/dashboard/users">
          ${csrfField(scope)}
          <label for="user-email">New user's email</label>
          <input id="user-email" name="email" type="email" required maxlength="254" />
          <label for="user-role">Role</label>
          <select id="user-role" name="role">
            <option value="member">member: sees usage, uses Try it, manages its own keys</option>
            <option value="owner">owner: manages every key and user of the team</option>
          </select>
          <button type="submit">Add user</button>
        </form>
        <h2>Users of the team</h2>
        ${table(
          [{ label: 'Email', long: true }, { label: 'Role' }, { label: 'Password' }, { label: 'Status' }, { label: 'Action' }],
          users.map((u) => [
            u.email,
            u.role,
            u.hasPassword ? 'set' : 'not yet',
            u.disabledAt ? html`Disabled ${time(u.disabledAt)}` : 'Active',
            u.disabledAt || userActionProblem(scope.user, u) ? '' : html`<form method="get" action="/dashboard/users/${u.id}/disable">${scope.teamField}<button type="submit" class="secondary">Disable</button></form>`,
          ]),
          'No users.',
        )}`,
      status,
    );
  }
  app.get('/users', (request, reply) => usersPage(request, reply, null));

  app.post('/users', { config: { form: [...SIGNED_IN_FORM, 'email', 'role'] } }, async (request, reply) => {
    const scope = await manager(request);
    const body = request.body as Record<string, unknown>;
    const role = body.role === 'owner' || body.role === 'member' ? body.role : null;
    let email: string;
    try {
      email = normaliseEmail(String(body.email ?? ''));
    } catch {
      return usersPage(request, reply, notice('error', 'That is not an email address.'), 422);
    }
    if (!role || !mayGrant(scope.user, role)) return usersPage(request, reply, notice('error', 'Choose a role: member or owner.'), 422);
    // Only this team's users are looked at: an account under this email in another team is its
    // own and changes nothing here, so the answer never tells whether there is one.
    const inTeam = () => usersPage(request, reply, notice('error', 'This email is already a user of this team.'), 409);
    if ((await stores.users.listUsers(scope.team.id)).some((user) => user.email === email)) return inTeam();
    let created: User;
    try {
      created = await stores.users.createUser({ teamId: scope.team.id, email, role });
    } catch (error) {
      // Added meanwhile, by another owner.
      if (error instanceof RangeError) return inTeam();
      throw error;
    }
    const link = await issuePasswordLink(stores.users, created.id, baseUrl(), now());
    return usersPage(
      request,
      reply,
      html`${notice('success', html`User <strong>${email}</strong> added. Send them this link to set their password: it works once, for 24 hours.`)}
        ${copyField('new-link', 'Set-password link', link)}`,
    );
  });

  async function disablable(request: FastifyRequest): Promise<{ scope: Scope; target: User }> {
    const scope = await manager(request);
    const id = (request.params as { id: string }).id;
    const target = (await stores.users.listUsers(scope.team.id)).find((u) => u.id === id && u.disabledAt === null);
    if (!target || target.id === scope.user.id) throw new PageError(404, 'There is no such user to disable.');
    const problem = userActionProblem(scope.user, target);
    if (problem) throw new PageError(403, problem);
    return { scope, target };
  }

  app.get('/users/:id/disable', async (request, reply) => {
    const { scope, target } = await disablable(request);
    return show(
      reply,
      scope,
      'Overview',
      'Disable user',
      html`<p>Disable <strong>${target.email}</strong>? They are signed out everywhere and cannot sign in again; their keys keep working until revoked.</p>
        <form method="post" action="/dashboard/users/${target.id}/disable">
          ${csrfField(scope)}
          <button type="submit" class="danger">Disable user</button>
        </form>
        <p><a href="/dashboard/users${scope.teamQuery}">Cancel</a></p>`,
    );
  });

  app.post('/users/:id/disable', { config: { form: SIGNED_IN_FORM } }, async (request, reply) => {
    const { target } = await disablable(request);
    await stores.users.disableUser(target.id);
    return usersPage(request, reply, notice('success', html`<strong>${target.email}</strong> is disabled and signed out everywhere.`));
  });
}
