import { intakeHandler } from "../pipeline/handlers";
import { lambdaDeps, lazy } from "../runtime/lambda";

export const handler = lazy(() => intakeHandler(lambdaDeps()));
