/**
 * The one script the inbox's pages run, inline with a per-response nonce (the Content-Security-Policy allows nothing
 * else): the plain `navigator.credentials` API for the ceremonies (enrol, sign in, sign a decision, and a grant with
 * it once the page has shown what the grant will cover), each a JSON POST carrying the session's CSRF token. No
 * library is served: base64url is a few lines.
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

  // The edits the approver made: each field whose text differs from what the page showed.
  const editsOf = (form) => {
    const edits = [];
    for (const el of form.querySelectorAll('[data-edit-path]')) {
      if (el.value === el.dataset.original) continue;
      let value = el.value;
      if (el.dataset.kind === 'json') {
        try {
          value = JSON.parse(el.value);
        } catch {
          throw new Error('edit ' + el.dataset.editPath + ': expected JSON, such as 40 or ["src/a.ts"]');
        }
      }
      edits.push({ path: el.dataset.editPath, value });
    }
    return edits;
  };
  const grantOf = (form) => {
    const data = new FormData(form);
    if (data.get('grant') !== 'yes') return undefined;
    const whole = (name) => {
      const text = String(data.get(name) || '').trim();
      return /^\d+$/.test(text) ? Number(text) : text;
    };
    const same = data.getAll('grant-same').map(String);
    const under = String(data.get('grant-under') || '').trim();
    return {
      minutes: whole('grant-minutes'),
      uses: whole('grant-uses'),
      ...(same.length ? { same } : {}),
      ...(under ? { under } : {}),
      ...(data.get('grant-this-session') === 'yes' ? { this_session: true } : {}),
    };
  };

  // What a grant will cover, in the inbox's words (describeGrantScope), shown before the passkey is asked to sign it:
  // true once the approver presses "Sign", false on "Cancel".
  const confirmGrant = (coverage) =>
    new Promise((resolve) => {
      const box = document.getElementById('grant-confirm');
      if (!box) return resolve(false);
      document.getElementById('grant-coverage').textContent = coverage;
      box.hidden = false;
      const done = (ok) => {
        box.hidden = true;
        resolve(ok);
      };
      document.getElementById('grant-sign').onclick = () => done(true);
      document.getElementById('grant-cancel').onclick = () => done(false);
    });

  const decide = document.getElementById('decide');
  decide?.addEventListener('submit', async (event) => {
    event.preventDefault();
    const decision = event.submitter?.value;
    const reason = new FormData(decide).get('reason') || '';
    const path = '/p/' + encodeURIComponent(decide.dataset.workflowId);
    try {
      const request = { decision, reason };
      if (decision === 'approve') {
        const edits = editsOf(decide);
        if (edits.length) request.edits = edits;
        const grant = grantOf(decide);
        if (grant) request.grant = grant;
      }
      const c = await post(path + '/challenge', request);
      if (c.grant && !(await confirmGrant(c.grant.coverage))) {
        say('Nothing was signed or sent: the grant was cancelled.', '');
        return;
      }
      const cred = await get(c.challenge, c.allow);
      const body = { challenge: c.challenge, assertion: assertionOf(cred) };
      if (c.grant) body.grant_assertion = assertionOf(await get(c.grant.challenge, c.allow));
      const done = await post(path + '/decide', body);
      if (done.grant_refusal) {
        say(done.grant_refusal, 'error');
        return;
      }
      const granted = done.grant ? '&grant=' + encodeURIComponent(done.grant.grant_id) : '';
      location.assign(path + '?done=' + encodeURIComponent(done.status) + granted);
    } catch (err) {
      // Shown where the buttons are, not only at the top of the page: the approver is looking there.
      const here = document.getElementById('decide-refusal');
      if (here) {
        here.textContent = 'Not decided: ' + err.message;
        here.hidden = false;
        here.scrollIntoView({ block: 'center' });
      }
      say('Not decided: ' + err.message, 'error');
    }
  });

  for (const form of document.querySelectorAll('form.revoke')) {
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const id = form.dataset.grantId;
      const reason = String(new FormData(form).get('reason') || '').trim();
      try {
        await post('/grants/' + encodeURIComponent(id) + '/revoke', reason ? { reason } : {});
        location.assign('/grants?revoked=' + encodeURIComponent(id));
      } catch (err) {
        say('Not revoked: ' + err.message, 'error');
      }
    });
  }
})();
`;
