// Migration 6 of the PostgreSQL schema (../schema.ts runs them in order). Released: never edited.

export const migration = {
  name: 'one outstanding password link per user',
  // Issuing a link replaces the user's unused one (users.ts), so that no older link outlives a
  // newer one or a password set since. Of the links outstanding now, the latest to expire is kept.
  sql: `
    DELETE FROM password_links l
     WHERE used_at IS NULL
       AND EXISTS (SELECT 1 FROM password_links n
                    WHERE n.user_id = l.user_id AND n.used_at IS NULL
                      AND (n.expires_at > l.expires_at OR (n.expires_at = l.expires_at AND n.hash > l.hash)));
    CREATE UNIQUE INDEX password_links_outstanding ON password_links (user_id) WHERE used_at IS NULL;
    `,
};
