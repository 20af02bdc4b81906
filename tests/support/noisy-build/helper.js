import { lazy } from './lazy.js';

export const helper = `helper of ${lazy}`;
