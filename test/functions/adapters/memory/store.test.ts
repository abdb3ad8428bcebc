import { MemoryStore } from '../../../../functions/adapters/memory/store.js';
import { describeStoreContract } from '../../store-contract.js';

describeStoreContract('memory', async () => ({ store: new MemoryStore(), cleanup: async () => {} }));
