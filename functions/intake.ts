import { lambdaDeps, lazy } from "../shared/lambda";
import { intakeHandler } from "../shared/pipeline/handlers";

export const handler = lazy(() => intakeHandler(lambdaDeps()));
