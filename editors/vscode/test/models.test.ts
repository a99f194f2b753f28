import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ModelItem, modelItems, parseModelList } from '../src/models';

test('parseModelList', () => {
  assert.equal(parseModelList(null), undefined);
  assert.equal(parseModelList({ current: 'x' }), undefined);
  assert.deepEqual(parseModelList({ models: ['b', 'a', ' a ', '', 3], current: 'a', baseUrl: 'http://h/v1' }), {
    models: ['a', 'b'],
    current: 'a',
    baseUrl: 'http://h/v1',
  });
});

test('modelItems: the setting first, the endpoint models, then server default', () => {
  const list = { models: ['gpt-4o', 'gpt-4o-mini', 'qwen2.5-coder'], current: 'gpt-4o-mini', baseUrl: 'http://h/v1' };
  const cases: { name: string; setting: string; want: ModelItem[] }[] = [
    {
      name: 'no setting: the server default is marked',
      setting: '',
      want: [
        { label: 'gpt-4o', value: 'gpt-4o' },
        { label: 'gpt-4o-mini', value: 'gpt-4o-mini', description: 'server default' },
        { label: 'qwen2.5-coder', value: 'qwen2.5-coder' },
        { label: 'Server default', description: 'clears fixpoint.model (now gpt-4o-mini)', value: '' },
      ],
    },
    {
      name: 'a listed setting comes first',
      setting: 'qwen2.5-coder',
      want: [
        { label: 'qwen2.5-coder', value: 'qwen2.5-coder', description: 'current setting' },
        { label: 'gpt-4o', value: 'gpt-4o' },
        { label: 'gpt-4o-mini', value: 'gpt-4o-mini' },
        { label: 'Server default', description: 'clears fixpoint.model (now gpt-4o-mini)', value: '' },
      ],
    },
    {
      name: 'a setting the endpoint does not list is kept and marked',
      setting: 'llama3',
      want: [
        { label: 'llama3', value: 'llama3', description: 'current setting · not listed by the endpoint' },
        { label: 'gpt-4o', value: 'gpt-4o' },
        { label: 'gpt-4o-mini', value: 'gpt-4o-mini' },
        { label: 'qwen2.5-coder', value: 'qwen2.5-coder' },
        { label: 'Server default', description: 'clears fixpoint.model (now gpt-4o-mini)', value: '' },
      ],
    },
  ];
  for (const c of cases) assert.deepEqual(modelItems(list, c.setting), c.want, c.name);
});
