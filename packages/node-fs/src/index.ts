export { nodeStorage, nodeCodec, defaultRoot, DRIVER_NAME, type NodeStorageOptions } from './node-storage.js';
export { createNodeMirror, type NodeMirrorOptions } from './node-mirror.js';
