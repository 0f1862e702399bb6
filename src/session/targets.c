/* targets.c - a process's labels, made once per process (and exec) and remembered by pid. */
#include "session/targets.h"
#include "kernel/cgroup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int meta_cgroup(const char *cg, struct bt_labels *out)
{
	char buf[4096], id[BT_CONTAINER_ID_LEN + 1];
	const char *rt = NULL;
	struct bt_kubepod pod;
	int e = bt_labels_set(out, "__meta_cgroup_path", cg);
	if (!e && !bt_cgroup_systemd_unit(cg, buf, sizeof(buf)))
		e = bt_labels_set(out, "__meta_systemd_unit", buf);
	bool container = bt_cgroup_container_id(cg, id, &rt) == 0;
	if (!e && container)
		e = bt_labels_set(out, "__meta_container_id", id) || bt_labels_set(out, "__meta_container_runtime", rt);
	if (!e && !bt_cgroup_kubepod(cg, &pod)) {
		e = bt_labels_set(out, "__meta_kubernetes_pod_uid", pod.uid) ||
		    bt_labels_set(out, "__meta_kubernetes_pod_qos", pod.qos);
		/* as the API server writes a container's id: runtime://id */
		const char *scheme = !container ? NULL : !strcmp(rt, "containerd") ? "containerd" :
				     !strcmp(rt, "crio") ? "cri-o" : !strcmp(rt, "docker") ? "docker" : "";
		if (!e && scheme) {
			snprintf(buf, sizeof(buf), "%s%s%s", scheme, *scheme ? "://" : "", id);
			e = bt_labels_set(out, "__meta_kubernetes_pod_container_id", buf);
		}
	}
	return e ? -ENOMEM : 0;
}

int bt_targets_meta(const struct bt_procmeta *m, const char *const *env, size_t nenv, struct bt_labels *out)
{
	char num[32], name[128];
	bt_labels_copy(out, &(struct bt_labels){ 0 });
	snprintf(num, sizeof(num), "%d", m->pid);
	int e = bt_labels_set(out, "__meta_process_pid", num) || bt_labels_set(out, "__meta_process_comm", m->comm) ||
		bt_labels_set(out, "__meta_process_exe", m->exe) ||
		bt_labels_set(out, "__meta_process_commandline", m->cmdline ? m->cmdline : "");
	if (!e && m->uid != (uid_t)-1) {
		snprintf(num, sizeof(num), "%u", (unsigned)m->uid);
		e = bt_labels_set(out, "__meta_process_uid", num);
	}
	for (size_t i = 0; !e && i < nenv && i < BT_PROCMETA_MAX_ENV; i++) {
		snprintf(name, sizeof(name), "__meta_process_env_%s", env[i]);
		e = bt_labels_set(out, name, m->env[i]);
	}
	if (e)
		return -ENOMEM;
	return m->cgroup[0] ? meta_cgroup(m->cgroup, out) : 0;
}

/* Alloy's pyroscope.ebpf: service_name from the discovery labels it knows, else the fallback. */
static const char *infer_service(const struct bt_targets_conf *c, const struct bt_labels *l, char *buf, size_t len)
{
	const char *v = bt_labels_get(l, "__meta_kubernetes_pod_annotation_pyroscope_io_service_name");
	if (v)
		return v;
	const char *ns = bt_labels_get(l, "__meta_kubernetes_namespace");
	const char *ct = bt_labels_get(l, "__meta_kubernetes_pod_container_name");
	if (ns && ct) {
		snprintf(buf, len, "ebpf/%s/%s", ns, ct);
		return buf;
	}
	if ((v = bt_labels_get(l, "__meta_docker_container_name")))
		return v;
	return c->fallback_service && *c->fallback_service ? c->fallback_service : "unspecified";
}

/* A value as a series may hold it (see bt_targets_finish), in place. */
static void series_safe(char *v)
{
	size_t n = strlen(v);
	if (n > BT_TARGETS_VALUE_MAX)
		v[n = BT_TARGETS_VALUE_MAX] = '\0';
	for (size_t i = 0; i < n; i++) {
		unsigned char b = (unsigned char)v[i];
		if (b <= 0x20 || b >= 0x7f || strchr(",={}\"\\", b))
			v[i] = '_';
	}
}

int bt_targets_finish(const struct bt_targets_conf *c, struct bt_labels *l, size_t *by)
{
	if (c->rules && c->rules->n) {
		int k = bt_relabel_apply(c->rules, l, by);
		if (k <= 0)
			return k;
	}
	if (!bt_labels_get(l, "service_name")) {
		char buf[1024];
		if (bt_labels_set(l, "service_name", infer_service(c, l, buf, sizeof(buf))))
			return -ENOMEM;
	}
	for (size_t i = 0; i < l->n;) {
		if (!strncmp(l->v[i].name, "__", 2) || !bt_label_name_ok(l->v[i].name)) {
			bt_labels_set(l, l->v[i].name, NULL);
			continue;
		}
		series_safe(l->v[i].value);
		i++;
	}
	return 1;
}

char *bt_targets_series_text(const struct bt_labels *l)
{
	size_t len = 1;
	for (size_t i = 0; i < l->n; i++)
		len += strlen(l->v[i].name) + strlen(l->v[i].value) + 2;
	char *s = malloc(len), *o = s;
	if (!s)
		return NULL;
	*o = '\0';
	for (size_t i = 0; i < l->n; i++)
		o += sprintf(o, "%s%s=%s", i ? "," : "", l->v[i].name, l->v[i].value);
	return s;
}

struct target {
	int pid;
	uint64_t cgroup_id;
	char *series;        /* NULL: dropped */
	char comms[BT_TARGET_COMMS][16];  /* the comms of the samples it was found for */
	unsigned ncomms;
};

static bool target_eq(void *ctx, uint64_t val, const void *key)
{
	return ((const struct target *)(uintptr_t)val)->pid == *(const int *)key;
}

/* The series text of a label set finished from the configured labels alone plus extra ones. */
static char *finished_text(const struct bt_targets_conf *c, const char *service)
{
	struct bt_labels l;
	bt_labels_init(&l);
	char *s = NULL;
	if ((!c->labels || !bt_labels_copy(&l, c->labels)) && (!service || !bt_labels_set(&l, "service_name", service))) {
		struct bt_targets_conf plain = *c;
		plain.rules = NULL;
		if (bt_targets_finish(&plain, &l, NULL) == 1)
			s = bt_targets_series_text(&l);
	}
	bt_labels_free(&l);
	return s;
}

int bt_targets_init(struct bt_targets *t, const struct bt_targets_conf *c)
{
	memset(t, 0, sizeof(*t));
	t->conf = *c;
	bt_htab_init(&t->index);
	t->other = finished_text(c, BT_TARGETS_OTHER);
	if (!c->rules || !c->rules->n)
		t->constant = finished_text(c, NULL);
	if (!t->other || ((!c->rules || !c->rules->n) && !t->constant)) {
		bt_targets_free(t);
		return -ENOMEM;
	}
	return 0;
}

static void clear(struct bt_targets *t)
{
	for (size_t i = 0; i < t->index.cap; i++)
		if (t->index.slots[i].used) {
			struct target *g = (struct target *)(uintptr_t)t->index.slots[i].val;
			free(g->series);
			free(g);
		}
	bt_htab_free(&t->index);
	bt_htab_init(&t->index);
	t->n = 0;
}

void bt_targets_free(struct bt_targets *t)
{
	clear(t);
	free(t->constant);
	free(t->other);
	memset(t, 0, sizeof(*t));
}

/* The labels of h's process into l: /proc's, or the sample's where /proc has moved on. */
static int describe(struct bt_targets *t, const struct bt_target_hint *h, struct bt_labels *l)
{
	struct bt_procmeta m;
	int e = bt_procmeta_read(t->conf.proc_root, h->pid, t->conf.env, t->conf.nenv, &m);
	if (e == -ENOMEM)
		return e;
	bool same = !e;
	if (same && h->comm) {
		char tc[64];
		same = !bt_procmeta_thread_comm(t->conf.proc_root, h->pid, h->tid > 0 ? h->tid : h->pid, tc, sizeof(tc)) &&
		       !strcmp(tc, h->comm);
	}
	if (!same) {
		if (!e)
			bt_procmeta_free(&m);
		memset(&m, 0, sizeof(m));
		m.pid = h->pid;
		m.uid = (uid_t)-1;
		snprintf(m.comm, sizeof(m.comm), "%s", h->comm ? h->comm : "");
		snprintf(m.exe, sizeof(m.exe), "%s", h->exe ? h->exe : "");
		t->st.from_sample++;
	}
	if (h->cgroup)
		snprintf(m.cgroup, sizeof(m.cgroup), "%s", h->cgroup);
	struct bt_labels meta;
	bt_labels_init(&meta);
	e = (t->conf.labels && bt_labels_copy(l, t->conf.labels)) ||
	    bt_targets_meta(&m, t->conf.env, t->conf.nenv, &meta) ? -ENOMEM : 0;
	for (size_t i = 0; !e && i < meta.n; i++)
		e = bt_labels_set(l, meta.v[i].name, meta.v[i].value);
	bt_labels_free(&meta);
	if (same)
		bt_procmeta_free(&m);
	return e;
}

/* A new target for h: described, relabeled, its series text made. */
static int make(struct bt_targets *t, const struct bt_target_hint *h, struct target *g)
{
	struct bt_labels l;
	bt_labels_init(&l);
	int e = describe(t, h, &l);
	int k = e ? e : bt_targets_finish(&t->conf, &l, NULL);
	g->pid = h->pid;
	g->cgroup_id = h->cgroup_id;
	g->ncomms = 0;
	if (h->comm)
		snprintf(g->comms[g->ncomms++], sizeof(g->comms[0]), "%s", h->comm);
	g->series = k == 1 ? bt_targets_series_text(&l) : NULL;
	bt_labels_free(&l);
	if (k < 0 || (k == 1 && !g->series))
		return -ENOMEM;
	t->st.targets++;
	t->st.dropped += k == 0;
	return k;
}

/* A known target sampled with a comm not seen with it: made again. The same labels: a thread of
 * another name, its comm noted; others: the process exec'd (its record lost), the new ones kept. */
static int recheck(struct bt_targets *t, const struct bt_target_hint *h, struct target *g)
{
	for (unsigned i = 0; i < g->ncomms; i++)
		if (!strncmp(g->comms[i], h->comm, sizeof(g->comms[0]) - 1))
			return 0;
	if (g->ncomms == BT_TARGET_COMMS)
		return 0;
	struct target n;
	int k = make(t, h, &n);
	if (k < 0)
		return k;
	if ((!n.series && !g->series) || (n.series && g->series && !strcmp(n.series, g->series))) {
		free(n.series);
		snprintf(g->comms[g->ncomms++], sizeof(g->comms[0]), "%s", h->comm);
		return 0;
	}
	free(g->series);
	*g = n;
	return 0;
}

int bt_targets_lookup(struct bt_targets *t, const struct bt_target_hint *h, const char **series)
{
	if (t->constant) {
		*series = t->constant;
		return 1;
	}
	uint32_t hash = bt_hash_u64((uint64_t)h->pid);
	uint64_t *v = bt_htab_find(&t->index, hash, target_eq, t, &h->pid);
	struct target *g = v ? (struct target *)(uintptr_t)*v : NULL;
	if (g && h->cgroup_id && g->cgroup_id != h->cgroup_id) {
		bt_targets_forget(t, h->pid);  /* moved to another cgroup: another target */
		g = NULL;
	}
	int e = g && h->comm ? recheck(t, h, g) : 0;
	if (e)
		return e;
	if (!g) {
		if (t->n >= BT_TARGETS_KEPT)
			clear(t);
		if (!(g = calloc(1, sizeof(*g))))
			return -ENOMEM;
		int k = make(t, h, g);
		if (k < 0 || bt_htab_insert(&t->index, hash, (uint64_t)(uintptr_t)g)) {
			free(g->series);
			free(g);
			return -ENOMEM;
		}
		t->n++;
	}
	*series = g->series;
	return g->series ? 1 : 0;
}

void bt_targets_forget(struct bt_targets *t, int pid)
{
	uint32_t hash = bt_hash_u64((uint64_t)pid);
	uint64_t *v = bt_htab_find(&t->index, hash, target_eq, t, &pid);
	if (!v)
		return;
	struct target *g = (struct target *)(uintptr_t)*v;
	bt_htab_remove(&t->index, hash, target_eq, t, &pid);
	free(g->series);
	free(g);
	t->n--;
}

const char *bt_targets_other(const struct bt_targets *t)
{
	return t->other;
}
