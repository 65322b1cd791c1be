import { sweep } from "../pipeline/sweeper";
import { lambdaDeps } from "../runtime/lambda";

export const handler = async () => sweep(lambdaDeps());
