// The "API key and server" panel: the saved key's masked hint and the server, the form that changes them, and the
// key test. The form is the user's: the server's values are written into it only when they arrive.
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { Actions } from '../actions';
import type { Environment, Settings, SettingsChange } from '../contract';
import { byId, setClass, setDisabled, setHidden, setText, showMessage } from '../dom';
import type { PageState } from '../state';

export type KeyView = Pick<PageState, 'key' | 'busy'>;

const ENVIRONMENT_LABELS: Record<Environment, string> = {
  production: 'Production',
  staging: 'Staging',
  custom: 'Custom',
};

function chosenEnvironment(): Environment {
  const checked = document.querySelector<HTMLInputElement>('input[name="environment"]:checked');
  const value = checked?.value;
  return value === 'staging' || value === 'custom' ? value : 'production';
}

function showCustomUrlRow(): void {
  byId('custom-url-row').hidden = chosenEnvironment() === 'production';
}

/** Opens the form while no key is saved; a save that keeps a key clears the typed key and folds the form away. */
function fillForm(settings: Settings, saved: boolean): void {
  const details = byId<HTMLDetailsElement>('settings-details');
  if (saved) {
    byId<HTMLInputElement>('api-key').value = '';
    if (settings.hasKey) details.open = false;
  }
  if (!settings.hasKey) details.open = true;
  for (const radio of document.querySelectorAll<HTMLInputElement>('input[name="environment"]')) {
    radio.checked = radio.value === settings.environment;
  }
  byId<HTMLInputElement>('base-url').value = settings.environment === 'production' ? '' : settings.baseUrl;
  showCustomUrlRow();
}

export function render(state: KeyView, previous?: KeyView): void {
  const { settings, error, message } = state.key;
  if (settings) {
    setText('key-status', settings.hasKey ? `Key saved: ${settings.keyHint}` : 'No API key saved yet.');
    setClass('key-status', 'error', !settings.hasKey);
    setText(
      'server-status',
      `Server: ${ENVIRONMENT_LABELS[settings.environment] ?? settings.environment} (${settings.baseUrl})`,
    );
    byId<HTMLInputElement>('api-key').placeholder = settings.hasKey
      ? 'Paste a new key to replace it'
      : 'Paste your API key';
    setHidden('remove-key', !settings.hasKey);
    if (settings !== previous?.key.settings) fillForm(settings, state.key.saved);
  } else if (error !== undefined) {
    setText('key-status', `Could not read the settings: ${error}`);
    setClass('key-status', 'error', true);
  }
  showMessage('settings-message', message.text, message.kind);
  const busy = state.busy > 0;
  setDisabled('save-settings', busy);
  setDisabled('remove-key', busy);
  setDisabled('test-key', busy || !settings?.hasKey);
}

/** The change the form asks for, or what is missing from it. */
function chosenChange(): SettingsChange | string {
  const change: SettingsChange = { environment: chosenEnvironment() };
  const key = byId<HTMLInputElement>('api-key').value.trim();
  if (key) change.apiKey = key;
  if (change.environment !== 'production') {
    const url = byId<HTMLInputElement>('base-url').value.trim();
    if (!url) {
      return change.environment === 'staging'
        ? 'Enter the staging address your provider gave you (there is no built-in one).'
        : 'Enter the custom base URL, for example https://api.example.com';
    }
    change.baseUrl = url;
  }
  return change;
}

export function wire(actions: Actions): void {
  byId('settings-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const typedKey = byId<HTMLInputElement>('api-key').value.trim() !== '';
    void actions.saveSettings(chosenChange(), typedKey ? 'Key and server saved.' : 'Server saved.');
  });
  byId('remove-key').addEventListener(
    'click',
    () => void actions.saveSettings({ apiKey: '' }, 'Key removed.'),
  );
  byId('test-key').addEventListener('click', () => void actions.testKey());
  for (const radio of document.querySelectorAll<HTMLInputElement>('input[name="environment"]')) {
    radio.addEventListener('change', showCustomUrlRow);
  }
}
