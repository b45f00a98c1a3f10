// The DAPA Checker node: Domain Authority, Page Authority, MR and spam score for the URL of every item, on two
// outputs (Results, Skipped). The work is in `checkItems` (the shell around the shared core); the parameters are in
// `description.ts`; the credential test, which bills nothing, is in `credentialTest.ts`.
import {
  NodeConnectionTypes,
  type IExecuteFunctions,
  type INodeExecutionData,
  type INodeType,
  type INodeTypeDescription,
} from 'n8n-workflow';
import { checkItems } from './checkItems';
import { testDapaCheckerCredential } from './credentialTest';
import { dapaCheckerProperties } from './description';
import { testSharedStateCredential } from './sharing/credentialTest';

export class DapaChecker implements INodeType {
  description: INodeTypeDescription = {
    displayName: 'DAPA Checker',
    name: 'dapaChecker',
    icon: { light: 'file:dapa.svg', dark: 'file:dapa.dark.svg' },
    group: ['transform'],
    version: 1,
    subtitle: 'Domain Authority, Page Authority, MR, spam score',
    description:
      'Get Domain Authority, Page Authority, MR and spam score for the URL of every item, in as few billed requests as the plan allows',
    defaults: {
      name: 'DAPA Checker',
    },
    usableAsTool: true,
    inputs: [NodeConnectionTypes.Main],
    outputs: [NodeConnectionTypes.Main, NodeConnectionTypes.Main],
    outputNames: ['Results', 'Skipped'],
    credentials: [
      {
        name: 'dapaCheckerApi',
        required: true,
        testedBy: 'dapaCheckerApiTest',
      },
      {
        name: 'dapaSharedStateApi',
        required: true,
        displayOptions: { show: { shareAcrossWorkers: [true] } },
        testedBy: 'dapaSharedStateApiTest',
      },
    ],
    properties: dapaCheckerProperties,
  };

  methods = {
    credentialTest: {
      dapaCheckerApiTest: testDapaCheckerCredential,
      dapaSharedStateApiTest: testSharedStateCredential,
    },
  };

  async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
    return await checkItems.call(this);
  }
}
