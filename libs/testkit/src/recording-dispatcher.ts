/**
 * A callback dispatcher (the `CallbackDispatcher` of `@svc/webhooks`) that delivers nothing and
 * keeps every event it is handed, for tests that check what the list code hands over: which
 * event, once, with which body. Delivery itself is tested against real receivers.
 */
export interface RecordedCallbackEvent {
  id: string;
  type: 'list.completed' | 'list.cancelled' | 'list.failed';
  keyId: string;
  url: string;
  body: string;
}

export class RecordingCallbackDispatcher {
  readonly events: RecordedCallbackEvent[] = [];

  enqueue(event: RecordedCallbackEvent): Promise<void> {
    this.events.push(event);
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
