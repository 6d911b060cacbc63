/*
 * Removing terminal escape sequences from text.
 *
 * run.log keeps what the child printed minus its colours, so that
 * `grep '^SUCCESS'` and the run.log readers see the upstream text; the
 * terminal renderer uses the same routine to classify coloured lines.
 *
 * Recognised (7-bit forms only: a lone 0x9b byte is more likely part of a
 * UTF-8 character than an 8-bit CSI):
 *   CSI      ESC [ params intermediates final     (colours, cursor moves)
 *   strings  ESC ] | P | X | ^ | _  ...  BEL or ESC \   (OSC titles, links, DCS)
 *   nF       ESC intermediates(0x20-0x2f)... final (charset selection: ESC ( B)
 *   two-byte ESC x, x in 0x30-0x7e                 (ESC =, ESC 7, ESC c, ...)
 *
 * The input is whole lines, so a sequence cut short by the end of the
 * buffer is garbage and is dropped; a sequence interrupted by a control
 * byte is dropped up to that byte and the control byte is kept.
 */
#ifndef ZLB_ANSI_H
#define ZLB_ANSI_H

#include <stddef.h>

#include "lib/strbuf.h"

/*
 * Strip escape sequences from buf[0..len) in place and return the new
 * length. No terminator is written; a NUL byte in the text is kept.
 */
size_t ansi_strip(char *buf, size_t len);

/* ansi_strip() on a strbuf, keeping it NUL-terminated. */
void strbuf_ansi_strip(struct strbuf *sb);

/* Does buf[0..len) contain an ESC byte at all? */
int ansi_has_escape(const char *buf, size_t len);

#endif
