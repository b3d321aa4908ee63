// The scripted "browser" of the authorization code interop tests: follows an
// authorization URL of as.mjs like a person would, signs in on
// oidc-provider's development login page (user `alice`), consents, and
// returns the query of the redirect to REDIRECT (`code`, `state`, `iss`)
// without ever connecting to REDIRECT (nothing listens there).
export const REDIRECT = 'http://127.0.0.1:9/callback';

/**
 * @param {URL} start the authorization URL a client SDK produced
 * @returns {Promise<URLSearchParams>} the redirect's query; throws without a code
 */
export async function browse(start) {
  const jar = new Map();
  let next = start.href;
  let method = 'GET';
  let body;
  for (let hop = 0; hop < 20; hop += 1) {
    const headers = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') };
    if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(next, { method, body, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
    if ([302, 303].includes(res.status)) {
      const location = new URL(res.headers.get('location'), next);
      if (location.href.startsWith(REDIRECT)) {
        if (!location.searchParams.get('code')) throw new Error(`no code in the redirect: ${location.href}`);
        return location.searchParams;
      }
      next = location.href; method = 'GET'; body = undefined;
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (!action) throw new Error(`HTTP ${res.status} without a form: ${html.replace(/<style[\s\S]*?<\/style>/g, '').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').slice(0, 400)}`);
    const form = new URLSearchParams();
    for (const [, name, value] of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g)) form.set(name, value);
    if (/name="login"/.test(html)) { form.set('login', 'alice'); form.set('password', 'any'); }
    next = new URL(action.replaceAll('&amp;', '&'), next).href; method = 'POST'; body = form.toString();
  }
  throw new Error('too many hops');
}
