// Who the platform is, and the storefront URLs it accepts (README.md, "URLs"). Pure functions: no I/O.
import { checkPlatformUrl, type PlatformHosts } from '../shared/url.ts';

/** The platform's id: the first segment of its endpoint ids and paths. */
export const PLATFORM = 'shopfront';

export const SHOPFRONT_HOSTS: PlatformHosts = {
  canonical: 'www.shopfront.example',
  accepted: ['www.shopfront.example', 'shopfront.example'],
};

const HANDLE = /^[A-Za-z0-9][A-Za-z0-9._-]{1,63}$/;

export type ShopfrontUrlCheck = { ok: true; url: string; handle: string } | { ok: false; message: string };

const FORMS = 'Must be a storefront URL: https://www.shopfront.example/shop/{handle}';

/**
 * Accepts any path that starts with `/shop/{handle}`; what follows (`/`, `/list/{id}`,
 * `/photo/{id}`, …), the query and the fragment are ignored, since the endpoint always returns
 * the whole storefront. Returns `https://www.shopfront.example/shop/{lower-cased handle}`.
 * Idempotent: a canonical URL comes back unchanged.
 */
export function parseShopfrontUrl(input: string): ShopfrontUrlCheck {
  const checked = checkPlatformUrl(input, SHOPFRONT_HOSTS);
  if (!checked.ok) return checked;
  const parts = checked.url.pathname.slice(1).split('/');
  if (parts[0] !== 'shop' || parts[1] === undefined || parts[1] === '') return { ok: false, message: FORMS };
  let handle: string;
  try {
    handle = decodeURIComponent(parts[1]);
  } catch {
    return { ok: false, message: FORMS };
  }
  if (!HANDLE.test(handle)) {
    return {
      ok: false,
      message: 'The handle must be 2 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit',
    };
  }
  const canonical = handle.toLowerCase();
  return { ok: true, url: `https://${SHOPFRONT_HOSTS.canonical}/shop/${canonical}`, handle: canonical };
}
