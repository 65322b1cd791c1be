import { intakeHandler } from "../pipeline/handlers";
import { lazy } from "../runtime/lambda";
import { lambdaDeps } from "../runtime/lambda-pipeline";

export const handler = lazy(() => intakeHandler(lambdaDeps()));
