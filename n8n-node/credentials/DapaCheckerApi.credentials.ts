// The "DAPA Checker API" credential: the API key (sent only as an `Authorization: Bearer` header) and which
// address of the service to use. It is tested by the DAPA Checker node (`testedBy`), with a probe that bills nothing.
import type { IAuthenticateGeneric, ICredentialType, Icon, INodeProperties } from 'n8n-workflow';

export class DapaCheckerApi implements ICredentialType {
  name = 'dapaCheckerApi';

  displayName = 'DAPA Checker API';

  icon: Icon = {
    light: 'file:../nodes/DapaChecker/dapa.svg',
    dark: 'file:../nodes/DapaChecker/dapa.dark.svg',
  };

  // The service's own API documentation: where the key comes from (the package's npm page exists only once published).
  documentationUrl = 'https://www.dapachecker.org/api-docs';

  properties: INodeProperties[] = [
    {
      displayName: 'API Key',
      name: 'apiKey',
      type: 'string',
      typeOptions: { password: true },
      required: true,
      default: '',
      description: 'The API key of your DAPA checker plan',
    },
    {
      displayName: 'Environment',
      name: 'environment',
      type: 'options',
      options: [
        {
          name: 'Production',
          value: 'production',
          description: 'The live service at https://www.dapachecker.org',
        },
        {
          name: 'Staging',
          value: 'staging',
          description: "The provider's staging address, which you type in Base URL (it is not public)",
        },
        {
          name: 'Custom',
          value: 'custom',
          description: 'Another address, such as a proxy or a local sandbox',
        },
      ],
      default: 'production',
    },
    {
      displayName: 'Base URL',
      name: 'baseUrl',
      type: 'string',
      default: '',
      placeholder: 'https://api.example.com',
      description:
        'For Staging or Custom: the address the API lives under, without the path /api/user/dapa-checker (a pasted full endpoint also works)',
      displayOptions: {
        show: {
          environment: ['staging', 'custom'],
        },
      },
    },
  ];

  authenticate: IAuthenticateGeneric = {
    type: 'generic',
    properties: {
      headers: {
        Authorization: '=Bearer {{$credentials.apiKey}}',
      },
    },
  };
}
