/**
 * The one script the inbox's pages run, inline with a per-response nonce (the Content-Security-Policy allows nothing
 * else): the plain `navigator.credentials` API for the three ceremonies (enrol, sign in, sign a decision), each a
 * JSON POST carrying the session's CSRF token. No library is served: base64url is a few lines.
 */
export const PAGE_SCRIPT = String.raw`
(() => {
  const csrf = document.querySelector('meta[name="csrf-token"]')?.content ?? '';
  const message = document.getElementById('message');
  const say = (text, kind) => {
    if (!message) return;
    message.textContent = text;
    message.className = 'notice ' + (kind || '');
    message.hidden = false;
  };
  const toB64 = (buf) => {
    const bytes = new Uint8Array(buf);
    let s = '';
    for (const b of bytes) s += String.fromCharCode(b);
    return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  };
  const fromB64 = (text) => {
    const s = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((text.length + 3) % 4));
    return Uint8Array.from(s, (c) => c.charCodeAt(0));
  };
  const post = async (url, body) => {
    const res = await fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
      body: JSON.stringify(body),
    });
    const json = await res.json().catch(() => ({ message: 'The inbox answered ' + res.status + '.' }));
    if (!res.ok) throw new Error(json.message || 'refused');
    return json;
  };
  const assertionOf = (cred) => ({
    credential_id: toB64(cred.rawId),
    authenticator_data: toB64(cred.response.authenticatorData),
    client_data_json: toB64(cred.response.clientDataJSON),
    signature: toB64(cred.response.signature),
  });
  const get = (challenge, allow) =>
    navigator.credentials.get({
      publicKey: {
        challenge: fromB64(challenge),
        allowCredentials: (allow || []).map((id) => ({ type: 'public-key', id: fromB64(id) })),
        userVerification: 'required',
        timeout: 120000,
      },
    });

  document.getElementById('sign-in')?.addEventListener('click', async () => {
    try {
      const { challenge } = await post('/sign-in/challenge', {});
      const cred = await get(challenge, []);
      await post('/sign-in', { challenge, assertion: assertionOf(cred) });
      location.assign('/');
    } catch (err) {
      say('Not signed in: ' + err.message, 'error');
    }
  });

  const enrol = document.getElementById('enrol');
  enrol?.addEventListener('submit', async (event) => {
    event.preventDefault();
    const token = enrol.dataset.token;
    try {
      const options = await post('/enrol/' + token + '/options', {});
      const cred = await navigator.credentials.create({
        publicKey: {
          ...options,
          challenge: fromB64(options.challenge),
          user: { ...options.user, id: fromB64(options.user.id) },
          excludeCredentials: (options.excludeCredentials || []).map((c) => ({ ...c, id: fromB64(c.id) })),
        },
      });
      const response = {
        id: cred.id,
        rawId: toB64(cred.rawId),
        type: cred.type,
        clientExtensionResults: cred.getClientExtensionResults(),
        response: {
          clientDataJSON: toB64(cred.response.clientDataJSON),
          attestationObject: toB64(cred.response.attestationObject),
          transports: cred.response.getTransports ? cred.response.getTransports() : [],
        },
      };
      const done = await post('/enrol/' + token, {
        challenge: options.challenge,
        name: new FormData(enrol).get('name') || undefined,
        response,
      });
      enrol.hidden = true;
      say(done.message, 'ok');
    } catch (err) {
      say('Not enrolled: ' + err.message, 'error');
    }
  });

  const decide = document.getElementById('decide');
  decide?.addEventListener('submit', async (event) => {
    event.preventDefault();
    const decision = event.submitter?.value;
    const reason = new FormData(decide).get('reason') || '';
    const path = '/p/' + encodeURIComponent(decide.dataset.workflowId);
    try {
      const c = await post(path + '/challenge', { decision, reason });
      const cred = await get(c.challenge, c.allow);
      const done = await post(path + '/decide', { challenge: c.challenge, assertion: assertionOf(cred) });
      location.assign(path + '?done=' + encodeURIComponent(done.status));
    } catch (err) {
      say('Not decided: ' + err.message, 'error');
    }
  });
})();
`;
