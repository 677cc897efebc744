// The project auto-commit killed after every step, isomorphic-git engine: see crash-every-step-suite.ts.
import { crashEveryStepSuite } from './crash-every-step-suite.js';

crashEveryStepSuite('iso');
