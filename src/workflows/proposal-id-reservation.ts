/**
 * A chosen proposal_id's reservation (src/client/proposals/reservation.ts). Its workflow id is what holds the id; the
 * run itself has nothing to do. It runs once, after a start delay (off the submission's critical path), only so it
 * ends as completed rather than timed out: its memo and its closed run keep holding the id until retention.
 */
export async function proposalIdReservation(): Promise<void> {
  // Nothing: the reservation is its workflow id and memo.
}
