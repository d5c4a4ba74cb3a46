#!/bin/sh
# Scenario 19: an interface flap under a link group's only link
# (doc/soft-roce.md section 5, "The only link"): s18.sh, but midway the
# client's eth0 goes down for 2 s and comes back.  Its rxe port goes down
# with it, so its library fails the link and, instead of resetting the
# connection, waits for the port; the server's link fails too (its writes
# are never acknowledged) and offers a new queue pair through the daemons.
# Once the port is back both ends connect new queue pairs, the server
# confirms the new link (number 2), and the connection goes on from its
# last delivered CDC, every byte once (sha256 at both ends), as a TCP
# connection outlives a cable pulled for a moment.
CUT=flap
SCEN=s19-$VMROLE
. /tests/s18.sh
