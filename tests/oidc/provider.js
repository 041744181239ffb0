// A local OpenID Connect provider for the browser tests' sign-in (tests/oidc_support.py
// starts it; `npm ci --prefix tests/oidc` installs it).  FOR TESTS ONLY: anyone can sign
// in as any test account by typing its e-mail (any password) into the provider's
// development login form (oidc-provider's devInteractions).
//
//   node tests/oidc/provider.js --port 4100 --client-id app --client-secret s \
//        --redirect-uri http://127.0.0.1:8501/oauth2callback [--redirect-uri ...]
//
// Every option may come from the environment instead: OIDC_PORT, OIDC_ISSUER (default
// http://127.0.0.1:<port>), OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_REDIRECT_URIS
// (space-separated).  Listens on 127.0.0.1 over http, prints `READY <issuer>` on stdout
// once listening, and stops on SIGTERM or SIGINT.
import { randomBytes } from 'node:crypto';
import * as querystring from 'node:querystring';
import { parseArgs } from 'node:util';

import Provider from 'oidc-provider';

// login name (typed into the form) -> claims; `sub` is the stable subject.
const ACCOUNTS = {
  'lead@example.org': { sub: 'lead-1', name: 'Lea Lead' },
  'ana@example.org': { sub: 'ana-1', name: 'Ana Annotator' },
  'bob@example.org': { sub: 'bob-1', name: 'Bob Annotator' },
  'carol@example.org': { sub: 'carol-1', name: 'Carol Annotator' },
  // an address the provider does not say it verified (self-registered, say)
  'eve@example.org': { sub: 'eve-1', name: 'Eve Unverified', verified: false },
};

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    issuer: { type: 'string' },
    'client-id': { type: 'string' },
    'client-secret': { type: 'string' },
    'redirect-uri': { type: 'string', multiple: true },
  },
});
const env = process.env;
const port = Number(values.port ?? env.OIDC_PORT ?? 0);
const issuer = values.issuer ?? env.OIDC_ISSUER ?? `http://127.0.0.1:${port}`;
const clientId = values['client-id'] ?? env.OIDC_CLIENT_ID;
const clientSecret = values['client-secret'] ?? env.OIDC_CLIENT_SECRET;
const redirectUris = values['redirect-uri']
  ?? (env.OIDC_REDIRECT_URIS ?? '').split(/\s+/).filter(Boolean);
if (!port || !clientId || !clientSecret || redirectUris.length === 0) {
  console.error('usage: node provider.js --port PORT --client-id ID --client-secret SECRET '
    + '--redirect-uri URI [--redirect-uri URI ...] [--issuer URL]');
  process.exit(2);
}

const htmlSafe = (v) => String(v).replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

// The account whose e-mail (or sub) was typed into the login form, or undefined.  The
// development form makes the typed login the session's account id; the tokens' `sub` is
// the accountId returned here, so it is the account's sub whichever was typed.
function lookup(id) {
  const key = String(id).trim().toLowerCase();
  const found = Object.entries(ACCOUNTS).find(([email, a]) => email === key || a.sub === key);
  if (!found) return undefined;
  const [email, { sub, name, verified = true }] = found;
  return {
    accountId: sub,
    async claims() {
      return { sub, email, email_verified: verified, name };
    },
  };
}

const provider = new Provider(issuer, {
  clients: [{
    client_id: clientId,
    client_secret: clientSecret,
    redirect_uris: redirectUris,
    // Streamlit's st.logout sends its redirect_uri (/oauth2callback) as the
    // post_logout_redirect_uri of the provider's end_session_endpoint
    post_logout_redirect_uris: redirectUris,
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  findAccount: (ctx, id) => lookup(id),
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name'],
  },
  // The claims of the requested scopes (email, profile) go into the ID token too,
  // not only to the userinfo endpoint: Streamlit's st.user is the ID token's claims,
  // and the dashboard's roles are by e-mail.
  conformIdTokenClaims: false,
  features: {
    devInteractions: { enabled: true },
    rpInitiatedLogout: {
      enabled: true,
      // plain pages without the default's web font (the tests run offline)
      async logoutSource(ctx, form) {
        ctx.body = `<!DOCTYPE html><html><head><meta charset="utf-8">
<title>Logout Request</title></head><body>
<h1>Do you want to sign-out from ${htmlSafe(ctx.host)}?</h1>${form}
<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>
<button type="submit" form="op.logoutForm">No, stay signed in</button>
</body></html>`;
      },
      async postLogoutSuccessSource(ctx) {
        ctx.body = '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Sign-out Success'
          + '</title></head><body><h1>Sign-out Success</h1></body></html>';
      },
    },
  },
  // signed cookies with a key of this run; no `secure` flag: the tests use http on
  // 127.0.0.1 (oidc-provider sets `secure` only on https requests)
  cookies: {
    keys: [randomBytes(32).toString('hex')],
    long: { httpOnly: true, sameSite: 'lax' },
    short: { httpOnly: true, sameSite: 'lax' },
  },
  async renderError(ctx, out) {
    ctx.type = 'html';
    const rows = Object.entries(out)
      .map(([k, v]) => `<p><b>${htmlSafe(k)}</b>: ${htmlSafe(v)}</p>`).join('');
    ctx.body = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>oops! something went
 wrong</title></head><body><h1>oops! something went wrong</h1>${rows}</body></html>`;
  },
});

// The development login form makes the typed login the session's account id, and the
// provider requires the account found for it to keep that id (the tokens' `sub`): so the
// typed e-mail becomes the account's sub before the form reaches the provider (an upstream
// body parser is the provider's supported fallback; it warns once).  An unknown login is
// refused here rather than failing later with a bare server_error.
provider.use(async (ctx, next) => {
  if (ctx.method === 'POST' && /^\/interaction\/[^/]+$/.test(ctx.path)
      && ctx.is('application/x-www-form-urlencoded')) {
    const chunks = [];
    for await (const chunk of ctx.req) chunks.push(chunk);
    const body = querystring.parse(Buffer.concat(chunks).toString('utf8'));
    if (body.prompt === 'login') {
      const account = lookup(body.login ?? '');
      if (!account) {
        ctx.status = 400;
        ctx.type = 'html';
        ctx.body = '<!DOCTYPE html><html><head><meta charset="utf-8"><title>unknown account'
          + '</title></head><body><h1>oops! something went wrong</h1><p>unknown test account: '
          + `${htmlSafe(body.login)}</p></body></html>`;
        return;
      }
      body.login = account.accountId;
    }
    ctx.req.body = body;
  }
  await next();
});

// The development login and consent pages import a web font from fonts.googleapis.com;
// the tests run without the internet, so drop the import rather than wait on it.
provider.use(async (ctx, next) => {
  await next();
  if (typeof ctx.body === 'string' && ctx.response.is('html')) {
    ctx.body = ctx.body.replace(/@import url\(https?:\/\/[^)]*\);?/g, '');
  }
});

provider.on('server_error', (ctx, err) => console.error('server_error', err));

const server = provider.listen(port, '127.0.0.1', () => {
  console.log(`READY ${issuer}`);
});

// the provider keeps everything in memory: nothing to save, so stop at once
function stop() {
  server.closeAllConnections?.();
  server.close();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
