// File-system errors in words an operator acts on: "permission denied" rather than a bare
// errno, and never a misleading one (a failed create reported as the ENOENT of a later read).

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'it is a directory',
  EEXIST: 'a file of that name exists',
  ENOENT: 'no such file or directory',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the path is too long',
};

/** `doing` followed by the reason, e.g. "cannot create DATA_DIR /srv/data: permission denied". */
export function describeFsError(error: unknown, doing: string): Error {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const reason = (code && REASONS[code]) ?? (error instanceof Error ? error.message : String(error));
  return new Error(`${doing}: ${reason}${code ? ` (${code})` : ''}`, { cause: error });
}
