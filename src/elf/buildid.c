/* buildid.c - build-id entry points over elffile (by buffer, fd or path) and the hex form used in
 * build-id directory paths and on the command line. */
#include "elf/buildid.h"
#include "elf/elffile.h"

#include <errno.h>
#include <string.h>

/* Reads the note of a just-opened handle and closes it: the handle never outlives the call. */
static int read_and_close(struct bt_elf *e, struct bt_build_id *out)
{
	int err = bt_elf_build_id(e, out);
	bt_elf_close(e);
	return err;
}

int bt_buildid_from_mem(const void *buf, size_t len, struct bt_build_id *out)
{
	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	struct bt_elf *e = NULL;
	int err = bt_elf_open_mem(buf, len, &e);
	return err ? err : read_and_close(e, out);
}

int bt_buildid_from_fd(int fd, struct bt_build_id *out)
{
	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	struct bt_elf *e = NULL;
	int err = bt_elf_open_fd(fd, &e);
	return err ? err : read_and_close(e, out);
}

int bt_buildid_from_path(const char *path, struct bt_build_id *out)
{
	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	struct bt_elf *e = NULL;
	int err = bt_elf_open_path(path, &e);
	return err ? err : read_and_close(e, out);
}

char *bt_buildid_hex(const struct bt_build_id *id, char *buf, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	if (!buf)
		return NULL;
	if (len == 0)
		return buf;
	buf[0] = '\0';
	if (!id || id->len == 0 || id->len > BT_BUILD_ID_MAXLEN || len < 2u * id->len + 1)
		return buf;
	for (size_t i = 0; i < id->len; i++) {
		buf[2 * i] = digits[id->data[i] >> 4];
		buf[2 * i + 1] = digits[id->data[i] & 0xf];
	}
	buf[2 * id->len] = '\0';
	return buf;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int bt_buildid_parse_hex(const char *hex, struct bt_build_id *out)
{
	if (!hex || !out)
		return -EINVAL;
	size_t n = strnlen(hex, 2 * BT_BUILD_ID_MAXLEN + 1);
	if (n < 2 || n > 2 * BT_BUILD_ID_MAXLEN || n % 2)
		return -EINVAL;
	struct bt_build_id id = { .len = (uint8_t)(n / 2) };
	for (size_t i = 0; i < id.len; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		id.data[i] = (uint8_t)(hi << 4 | lo);
	}
	*out = id;
	return 0;
}

bool bt_buildid_eq(const struct bt_build_id *a, const struct bt_build_id *b)
{
	if (!a || !b || a->len != b->len || a->len > BT_BUILD_ID_MAXLEN)
		return false;
	return a->len == 0 || memcmp(a->data, b->data, a->len) == 0;
}
