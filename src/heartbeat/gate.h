/* gate.h — the ΔH gate: only changes that carry information reach C.
 *
 * seed 000 L242–267: every tick, a change is kept only if its information
 * gain ΔH(event) exceeds δ_hb; otherwise the heartbeat stays silent (no
 * journal line, no surface entry, no interrupt). The seed leaves ΔH
 * abstract; Loom defines it as a product of three terms in [0,1]:
 *
 *     ΔH = novelty × weight × magnitude
 *
 *   novelty   0 when this exact change (fingerprint) was already reported —
 *             in this run, or in the journal the gate was seeded from;
 *             otherwise 2^−k, where k is the number of changes to the same
 *             subject (a path, a topic, a pid file, a resource) that passed
 *             the gate within the last novelty_window seconds. A file saved
 *             four times in a minute tells less each time.
 *   weight    the source's weight (settings "weight"; default 1, mf_events
 *             0.8): how much a change of this kind is worth at all.
 *   magnitude how large the change is, from the source:
 *             filesystem  created/deleted 1; modified 0.5 + 0.5 × fraction
 *                         changed (4 KiB blocks that differ, or |Δsize| /
 *                         size when not hashed by content)
 *             resource    0.5 + 0.5 × (value − threshold) / (100 − threshold)
 *             mf_events   the publisher's delta_h in the event file, else 1
 *             process, external_signal  1
 *
 * An event passes when novelty > 0 and (ΔH > δ_hb or its urgency is
 * critical): a critical event is never silenced by the threshold (it is the
 * Ψ veto), but the same change is still never reported twice.
 *
 * The gate remembers at most GATE_MAX_SEEN fingerprints (oldest forgotten
 * first) and GATE_SUBJECT_HISTORY passes per subject. Heartbeat thread only.
 */
#ifndef LOOM_HEARTBEAT_GATE_H
#define LOOM_HEARTBEAT_GATE_H

#include <stdbool.h>
#include <stdint.h>

#include "heartbeat/watch/watch.h"

#define GATE_MAX_SEEN 8192
#define GATE_SUBJECT_HISTORY 8

typedef struct hb_gate hb_gate;

typedef struct gate_verdict {
    bool pass;
    double delta_h;   /* novelty × weight × magnitude */
    double novelty;
} gate_verdict;

/* delta_hb: the threshold δ_hb; window_s: the novelty window (seconds). */
hb_gate *gate_new(double delta_hb, double window_s);
void gate_free(hb_gate *g);
/* Marks a fingerprint as already reported (from the journal at start). */
void gate_seed(hb_gate *g, const char *fingerprint);
/* Judges c at now_ms; a passing candidate is remembered (its fingerprint
 * and a pass for its subject). */
gate_verdict gate_judge(hb_gate *g, const hb_candidate *c, int64_t now_ms);

#endif
