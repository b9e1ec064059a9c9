import type { Socket } from "node:net";
import { ReferenceBridge } from "../reference/bridge.js";
import type { Mutant } from "./mutant.js";

// A fault that strikes only some connections, as real ones often do (a race, a pool of workers
// of which one is broken): each new connection is served either by the mutant or by the
// reference bridge. The two keep their own state, so this suits faults that need no history.

/** `m` acting on about `fraction` of connections, drawn by `random` as each one is accepted. */
export function flaky(m: Mutant, fraction: number, random: () => number = Math.random): Mutant {
  if (!(fraction >= 0 && fraction <= 1)) throw new Error("a flaky fraction is between 0 and 1");
  return {
    ...m,
    name: `${m.name}@${fraction}`,
    description: `${m.description}, on about ${Math.round(fraction * 100)}% of connections`,
    create: (options) => new Flaky(m.create(options), new ReferenceBridge(options), fraction, random),
  };
}

/** Reaches the per-connection entry point of another bridge instance. */
type Acceptor = { accept(socket: Socket): void };

class Flaky extends ReferenceBridge {
  constructor(
    private readonly faulty: ReferenceBridge,
    private readonly sound: ReferenceBridge,
    private readonly fraction: number,
    private readonly random: () => number,
  ) {
    super(faulty.options);
    // The two serve this bridge's connections, so they answer status with its address.
    for (const inner of [faulty, sound]) Object.defineProperty(inner, "address", { get: () => this.address });
  }

  protected override accept(socket: Socket): void {
    const to = this.random() < this.fraction ? this.faulty : this.sound;
    (to as unknown as Acceptor).accept(socket);
  }

  override async listen(): Promise<{ host: string; port: number }> {
    const address = await super.listen();
    this.faulty.startLoop();
    this.sound.startLoop();
    return address;
  }

  override async close(): Promise<void> {
    await Promise.all([this.faulty.close(), this.sound.close(), super.close()]);
  }
}
