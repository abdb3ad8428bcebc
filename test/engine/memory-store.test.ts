import { MemoryStore } from '../../engine/index.js';
import { describeStoreContract } from '../functions/store-contract.js';

describeStoreContract('memory', async () => ({ store: new MemoryStore(), cleanup: async () => {} }));
