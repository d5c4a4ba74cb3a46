/* SCAFFOLD: replaced by the daemon's main and server loop. */
int main(void) { return 1; }
