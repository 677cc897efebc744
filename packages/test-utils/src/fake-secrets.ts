/**
 * Fake secrets, one of each shape secretlint's recommended preset documents, assembled from parts
 * so that no source file holds one whole (a host's own secret scanning reads this repository too).
 * None is a real credential: each body is a fixed pattern of letters and digits.
 */
const body = (alphabet: string, n: number): string => {
  let out = '';
  for (let i = 0; i < n; i++) out += alphabet[(i * 7 + 3) % alphabet.length];
  return out;
};
const ALNUM = 'A1b2C3d4E5f6G7h8J9k0LmNpQrStUvWxYz';
const UPPER = 'QRZ3XW2LMNP4KTY7';

/** Each fake secret by the preset rule that finds it. */
export const FAKE_SECRETS = Object.freeze({
  aws: `AKIA${UPPER}`,
  github: `ghp_${body(ALNUM, 36)}`,
  npm: `npm_${body(ALNUM, 36)}`,
  slack: `xox${'b'}-${'2'.repeat(12)}-${'3'.repeat(13)}-${body(ALNUM, 24)}`,
  openai: `sk-${body(ALNUM, 20)}T3Blbk${'FJ'}${body(ALNUM, 20)}`,
  anthropic: `sk-ant-${'api03'}-${body(ALNUM, 93)}AA`,
  gitlab: `glpat-${body(ALNUM, 20)}`,
  sendgrid: `SG.${body(ALNUM, 22)}.${body(ALNUM, 43)}`,
  basicauth: `https://deploy:${'hunter'}2Secret@git.example.com/repo.git`,
  'database-connection-string': `postgres://app:${'Sup3r'}Secret99@db.internal.example:5432/prod`,
  // The rule wants base64 of an ASN.1 sequence: `MI` first.
  privatekey: `-----BEGIN RSA ${'PRIVATE'} KEY-----\nMI${[0, 1, 2].map((i) => body(ALNUM.slice(i), 64)).join('\n')}\n-----END RSA ${'PRIVATE'} KEY-----`,
} as const);

export type FakeSecretRule = keyof typeof FAKE_SECRETS;
