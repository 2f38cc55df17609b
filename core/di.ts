// reflect-metadata must be evaluated before tsyringe; every core module takes tsyringe from here,
// so the order holds whichever module is imported first.
import 'reflect-metadata';

export { container, inject, injectable } from 'tsyringe';
export type { DependencyContainer } from 'tsyringe';
