// The seed of every property-based test: fixed, so a run (and a failure in CI) can be repeated;
// FOLIO_FUZZ_SEED tries another.
export const FUZZ_SEED = Number(process.env.FOLIO_FUZZ_SEED ?? 20261123);
