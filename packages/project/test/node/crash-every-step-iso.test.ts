// The project auto-commit killed after every step, object engine: see crash-every-step-suite.ts.
import { crashEveryStepSuite } from './crash-every-step-suite.js';

crashEveryStepSuite('iso');
