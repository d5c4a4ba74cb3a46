/* Trees of files for fixtures (a sysfs below a temporary root). */
#ifndef UNIT_TREEFX_H
#define UNIT_TREEFX_H

/* The tree below root removed. */
void rm_tree(const char *root);
/* A file below root with text, its directories made (path printf-style). */
void put(const char *root, const char *text, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A symbolic link below root (rel) to target. */
void link_at(const char *root, const char *target, const char *rel);

#endif
