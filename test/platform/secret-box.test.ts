// Sealed secrets open only with the same FOLIO_SECRET and for the same column, and hide their content.
import { describe, expect, it } from 'vitest';
import { createSecretBox, isSealed, SecretBoxError } from '../../src/store/secret-box.ts';

describe('secret box', () => {
  const box = createSecretBox('test-secret-0123456789abcdef');

  it('round-trips, with a fresh IV each time, and the plain text nowhere in the sealed value', () => {
    const token = 'ghp_live_token_1234567890';
    const a = box.seal(token, 'projects.repo_token');
    const b = box.seal(token, 'projects.repo_token');
    expect(isSealed(a)).toBe(true);
    expect(a).not.toBe(b);
    expect(a).not.toContain(token);
    expect(box.open(a, 'projects.repo_token')).toBe(token);
    expect(box.open(box.seal('', 'x'), 'x')).toBe('');
    expect(box.open(box.seal('ünïcødé 🔑', 'x'), 'x')).toBe('ünïcødé 🔑');
  });

  it('refuses another key, another column, a changed byte and an unsealed value', () => {
    const sealed = box.seal('s3cret', 'projects.webhook_secret');
    expect(() => createSecretBox('another-secret-0123456789').open(sealed, 'projects.webhook_secret')).toThrow(SecretBoxError);
    expect(() => box.open(sealed, 'projects.repo_token')).toThrow(SecretBoxError);
    const chars = [...sealed];
    const i = sealed.length - 3;
    chars[i] = chars[i] === 'A' ? 'B' : 'A';
    expect(() => box.open(chars.join(''), 'projects.webhook_secret')).toThrow(/cannot be opened/);
    expect(() => box.open('plain', 'projects.webhook_secret')).toThrow(/not sealed/);
    expect(() => box.open('enc:v1:AAAA', 'projects.webhook_secret')).toThrow(/damaged/);
  });
});
