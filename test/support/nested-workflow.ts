/**
 * A workflow whose task fans out again: `nested` fans out over `groups` (step `outer`), and each
 * child over its own `group` (step `inner`), one `leaf` step per item.
 */
export const NESTED_WORKFLOW = `workflows:
  - name: nested
    steps:
      - name: outer
        task: per-group
    tasks:
      - name: per-group
        itemListKey: groups
        steps:
          - name: inner
            task: per-item
      - name: per-item
        itemListKey: group
        itemKey: item
        steps: [ { name: leaf } ]
`;
