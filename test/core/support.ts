// Small helpers shared by the core's tests.
export { keyOfDomain } from '../../shared';
export { seededRandom as seededRandomForTests } from '../../shared/random';
