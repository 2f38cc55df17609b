import { container, type DependencyContainer } from './di.js';

/** One child container per kernel; nothing is ever registered in tsyringe's global container. */
export function createKernelContainer(): DependencyContainer {
  return container.createChildContainer();
}
