import { ConfigError } from '@aigw/common';
import { describe, expect, it } from 'vitest';
import { readConfig } from './config.ts';

describe('the store flavor (MONGO_FLAVOR)', () => {
  it('when nothing is set, then the store is FerretDB (the local stack and the tests)', () => {
    expect(readConfig({}).MONGO_FLAVOR).toBe('ferretdb');
  });

  it('when mongodb is set, then it is kept; an unknown kind is refused at start-up', () => {
    expect(readConfig({ MONGO_FLAVOR: 'mongodb' }).MONGO_FLAVOR).toBe('mongodb');
    expect(() => readConfig({ MONGO_FLAVOR: 'postgres' })).toThrow(ConfigError);
    expect(() => readConfig({ MONGO_FLAVOR: 'postgres' })).toThrow(/MONGO_FLAVOR/);
  });
});
