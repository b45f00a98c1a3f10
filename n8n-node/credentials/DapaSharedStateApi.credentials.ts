// The "DAPA Shared State API" credential: the HTTP address of a webdis in front of a Redis of DAPA's own (never the
// Redis of n8n's queue: through webdis the credential could reach the queue's jobs, and DAPA's answers would share
// the queue's memory), and webdis's optional HTTP Basic auth. Executions on different workers share through it what is
// in flight, what was answered and the plan's window; the DAPA API key never goes there: Redis keys hold a keyed
// digest (HMAC with the Signing Secret), and each answer kept there is signed with it (one that does not verify is
// not reused).
// It is tested by the DAPA Checker node (`testedBy`), with commands that say which of address, auth or ACL is wrong.
import type { ICredentialType, Icon, INodeProperties } from 'n8n-workflow';

export class DapaSharedStateApi implements ICredentialType {
  name = 'dapaSharedStateApi';

  displayName = 'DAPA Shared State API';

  icon: Icon = {
    light: 'file:../nodes/DapaChecker/dapa.svg',
    dark: 'file:../nodes/DapaChecker/dapa.dark.svg',
  };

  documentationUrl = 'https://github.com/nicolasff/webdis';

  properties: INodeProperties[] = [
    {
      displayName: 'Webdis URL',
      name: 'url',
      type: 'string',
      required: true,
      default: '',
      placeholder: 'http://127.0.0.1:7379',
      description:
        "The HTTP address of a webdis in front of a Redis of DAPA's own (not the Redis of n8n's queue: whoever holds this credential can run commands there), reachable from the main instance and every worker",
    },
    {
      displayName: 'User',
      name: 'user',
      type: 'string',
      default: '',
      description:
        "The user of webdis's HTTP Basic auth (the http_basic_auth of an ACL entry in webdis.json); leave empty when webdis asks for none",
    },
    {
      displayName: 'Password',
      name: 'password',
      type: 'string',
      typeOptions: { password: true },
      default: '',
      description: "The password of webdis's HTTP Basic auth; leave empty when webdis asks for none",
    },
    {
      displayName: 'Signing Secret',
      name: 'secret',
      type: 'string',
      typeOptions: { password: true },
      required: true,
      default: '',
      placeholder: 'at least 16 random characters',
      description:
        'A secret of your choice (at least 16 characters), kept only in this credential: the names of DAPA keys in Redis are keyed digests made with it, and every answer kept there is signed with it, so that an answer written by anyone without it is not reused',
    },
  ];
}
