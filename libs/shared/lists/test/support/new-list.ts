/**
 * A list record as the store takes it (`NewList`), for tests that create one directly: a list of
 * plain addresses in one CSV column, owned by `key`, without callback or free allowance. Each test
 * gives its id and what it is about.
 */
import type { NewList } from '../../src/model.ts';

export function newList(list: Pick<NewList, 'id'> & Partial<NewList>): NewList {
  return {
    keyId: 'key',
    name: null,
    count: 3,
    distinct: 3,
    inputChunks: 1,
    workChunks: 1,
    createdAt: 0,
    callbackUrl: null,
    allowance: 0,
    layout: { columns: ['email'], addressColumn: 0, delimiter: ',', bom: false },
    ...list,
  };
}
