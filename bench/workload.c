/* A multithreaded word-frequency count: the bundled workload.

   Generator threads write chunks of pseudo-random English-like text
   (word ranks follow Zipf's law) and hand them to counter threads through
   a bounded queue guarded by a mutex and two condition variables.  Each
   counter thread tokenises its chunks (ctype, lower-casing) into a
   thread-local buffer and a thread-local hash table, and merges that table
   into a shared hash table whose buckets are guarded by striped mutexes.
   Per-thread statistics live in thread-specific data whose destructor adds
   them to the totals; the vocabulary is built once with pthread_once; a
   barrier starts everybody together.

   The text of chunk K depends only on K, so the result does not depend on
   the number of threads or on scheduling: the program prints a checksum of
   the final table, which must be the same under every thread library.

   Output (see bench/bench.h):
       workload_seconds SECONDS s lower
       workload_cpu_seconds SECONDS s lower   (all threads, user and system)
       # check checksum 0x...    # check words N    # check distinct N
       # ...                     (top words, throughput)

   usage: workload [-t COUNTERS] [-g GENERATORS] [-s MIB] [-c CHUNK_KIB] [-v]
                   [-B]

   -B plants a lock-order bug for the lock validator (xpthread-lockdep(7))
   to find; the results stay the same (see plant_order_bug).  */
#include "bench.h"
#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

/* ---- deterministic text ------------------------------------------------ */

#define VOCAB_BITS 16
#define VOCAB (1u << VOCAB_BITS)
#define MAX_WORD 31

static char vocab[VOCAB][MAX_WORD + 1];
static unsigned char vocab_len[VOCAB];
static pthread_once_t vocab_once = PTHREAD_ONCE_INIT;

static inline uint64_t
splitmix64 (uint64_t *state)
{
  uint64_t z = (*state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static void
build_vocab (void)
{
  static const char *const onset[] = {
    "", "b", "c", "d", "f", "g", "h", "l", "m", "n", "p", "r", "s", "t",
    "th", "st", "w", "br", "ch", "sh", "tr", "gr", "k", "v"
  };
  static const char *const vowel[] = {
    "a", "e", "i", "o", "u", "ea", "ou", "ai", "ee", "y"
  };
  static const char *const coda[] = {
    "", "", "n", "r", "s", "t", "l", "nd", "ng", "st", "ck", "m"
  };
  for (unsigned r = 0; r < VOCAB; r++)
    {
      uint64_t st = r * 2654435761u + 12345;
      /* Frequent words are short.  */
      unsigned bits = 0;
      for (unsigned v = r + 1; v > 1; v >>= 1)
        bits++;
      unsigned syllables = 1 + bits / 5;
      if (bits > 3)
        syllables += (unsigned) (splitmix64 (&st) % 2);
      char *w = vocab[r];
      size_t len = 0;
      for (unsigned s = 0; s < syllables; s++)
        {
          uint64_t x = splitmix64 (&st);
          const char *parts[3] = {
            onset[x % (sizeof onset / sizeof *onset)],
            vowel[(x >> 16) % (sizeof vowel / sizeof *vowel)],
            coda[(x >> 32) % (sizeof coda / sizeof *coda)]
          };
          for (int p = 0; p < 3; p++)
            for (const char *c = parts[p]; *c != '\0' && len < MAX_WORD; c++)
              w[len++] = *c;
        }
      w[len] = '\0';
      vocab_len[r] = (unsigned char) len;
    }
}

/* A rank with density about 1/rank (Zipf's law, exponent 1): a uniform
   exponent, then a uniform rank within that power of two.  */
static inline unsigned
zipf_rank (uint64_t x)
{
  unsigned e = (unsigned) (x % VOCAB_BITS);
  unsigned base = 1u << e;
  return base - 1 + (unsigned) ((x >> 8) % base);
}

/* Write the text of chunk K into BUF (at most SIZE bytes); return its
   length and count its words into *WORDS.  */
static size_t
generate_chunk (uint64_t k, char *buf, size_t size, long *words)
{
  uint64_t st = k * 0x2545f4914f6cdd1du + 7;
  size_t len = 0;
  long n = 0;
  int sentence = 0;
  for (;;)
    {
      uint64_t x = splitmix64 (&st);
      unsigned r = zipf_rank (x);
      size_t wl = vocab_len[r];
      if (len + wl + 2 > size)
        break;
      memcpy (buf + len, vocab[r], wl);
      if (sentence == 0)
        buf[len] = (char) toupper ((unsigned char) buf[len]);
      len += wl;
      n++;
      if (++sentence >= 6 + (int) ((x >> 40) % 12))
        {
          buf[len++] = '.';
          sentence = 0;
          buf[len++] = (x >> 56) % 8 == 0 ? '\n' : ' ';
        }
      else
        buf[len++] = (x >> 52) % 16 == 0 ? ',' : ' ';
    }
  *words = n;
  return len;
}

/* ---- the work queue ---------------------------------------------------- */

struct chunk
{
  char *text;
  size_t len;
};

#define QUEUE_CAP 16

static struct
{
  pthread_mutex_t lock;
  pthread_cond_t not_empty, not_full;
  struct chunk items[QUEUE_CAP];
  unsigned head, count;
  int producers;                /* generators still running */
  long next_chunk, chunks;      /* next chunk to generate, total */
} queue = {
  .lock = PTHREAD_MUTEX_INITIALIZER,
  .not_empty = PTHREAD_COND_INITIALIZER,
  .not_full = PTHREAD_COND_INITIALIZER,
};

static void
queue_put (struct chunk c)
{
  pthread_mutex_lock (&queue.lock);
  while (queue.count == QUEUE_CAP)
    pthread_cond_wait (&queue.not_full, &queue.lock);
  queue.items[(queue.head + queue.count) % QUEUE_CAP] = c;
  queue.count++;
  pthread_cond_signal (&queue.not_empty);
  pthread_mutex_unlock (&queue.lock);
}

/* Take a chunk; false once the queue is empty and every producer is done.  */
static int
queue_get (struct chunk *c)
{
  pthread_mutex_lock (&queue.lock);
  while (queue.count == 0 && queue.producers > 0)
    pthread_cond_wait (&queue.not_empty, &queue.lock);
  int ok = queue.count > 0;
  if (ok)
    {
      *c = queue.items[queue.head];
      queue.head = (queue.head + 1) % QUEUE_CAP;
      queue.count--;
      pthread_cond_signal (&queue.not_full);
    }
  pthread_mutex_unlock (&queue.lock);
  return ok;
}

/* ---- the shared table -------------------------------------------------- */

struct node
{
  struct node *next;
  uint64_t hash;
  long count;
  unsigned len;
  char word[];
};

#define TABLE_BITS 16
#define STRIPES 256

static struct node *table[1u << TABLE_BITS];
static pthread_mutex_t stripe[STRIPES];

static inline uint64_t
hash_word (const char *w, size_t len)
{
  uint64_t h = 0xcbf29ce484222325u;           /* FNV-1a */
  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char) w[i]) * 0x100000001b3u;
  return h ^ (h >> 29);
}

static void
table_add (uint64_t h, const char *w, unsigned len, long count)
{
  size_t b = h & ((1u << TABLE_BITS) - 1);
  pthread_mutex_t *m = &stripe[b % STRIPES];
  pthread_mutex_lock (m);
  struct node *n;
  for (n = table[b]; n != NULL; n = n->next)
    if (n->hash == h && n->len == len && memcmp (n->word, w, len) == 0)
      break;
  if (n == NULL)
    {
      n = malloc (sizeof *n + len + 1);
      if (n == NULL)
        {
          fprintf (stderr, "workload: out of memory\n");
          exit (1);
        }
      n->hash = h;
      n->count = 0;
      n->len = len;
      memcpy (n->word, w, len);
      n->word[len] = '\0';
      n->next = table[b];
      table[b] = n;
    }
  n->count += count;
  pthread_mutex_unlock (m);
}

/* ---- per-thread state -------------------------------------------------- */

#define LOCAL_BITS 12
#define LOCAL_SIZE (1u << LOCAL_BITS)

struct local_entry
{
  uint64_t hash;
  long count;
  unsigned len;
  char word[MAX_WORD + 1];
};

struct local_table
{
  unsigned used;
  struct local_entry e[LOCAL_SIZE];
};

struct stats
{
  long words, chunks, bytes, flushes;
};

static pthread_key_t stats_key;
static pthread_mutex_t totals_lock = PTHREAD_MUTEX_INITIALIZER;
static struct stats totals;
static atomic_long generated_words;

/* -B: a planted lock-order bug.  A generator that is done takes
   totals_lock while it holds queue.lock; a counter's stats destructor
   takes queue.lock while it holds totals_lock.  Both orders are taken in
   every run, but never at the same time: a counter exits only once
   queue_get has seen no producer left, after every generator's last
   section under queue.lock, so the program never hangs.  The validator
   reports the cycle all the same.  */
static int plant_order_bug;
static long generators_done;    /* -B: under totals_lock */

/* Thread-local buffers: the word being read and the local table.  */
static __thread char word_buf[MAX_WORD + 1];
static __thread struct local_table *local;

static void
stats_destructor (void *p)
{
  struct stats *s = p;
  pthread_mutex_lock (&totals_lock);
  if (plant_order_bug)
    {
      /* totals_lock, then queue.lock.  */
      pthread_mutex_lock (&queue.lock);
      int producers = queue.producers;
      pthread_mutex_unlock (&queue.lock);
      if (producers != 0 || generators_done == 0)
        {
          fprintf (stderr, "workload: a counter ended before the "
                   "generators\n");
          exit (1);
        }
    }
  totals.words += s->words;
  totals.chunks += s->chunks;
  totals.bytes += s->bytes;
  totals.flushes += s->flushes;
  pthread_mutex_unlock (&totals_lock);
  free (s);
}

static void
local_flush (struct stats *s)
{
  for (unsigned i = 0; i < LOCAL_SIZE; i++)
    {
      struct local_entry *e = &local->e[i];
      if (e->count != 0)
        {
          table_add (e->hash, e->word, e->len, e->count);
          e->count = 0;
        }
    }
  local->used = 0;
  s->flushes++;
}

static void
local_add (struct stats *s, const char *w, unsigned len)
{
  uint64_t h = hash_word (w, len);
  for (unsigned i = (unsigned) h;; i++)
    {
      struct local_entry *e = &local->e[i & (LOCAL_SIZE - 1)];
      if (e->count == 0)
        {
          /* Keep the table at most 3/4 full.  */
          if (local->used >= LOCAL_SIZE / 4 * 3)
            {
              local_flush (s);
              local_add (s, w, len);
              return;
            }
          e->hash = h;
          e->len = len;
          memcpy (e->word, w, len);
          e->word[len] = '\0';
          e->count = 1;
          local->used++;
          return;
        }
      if (e->hash == h && e->len == len && memcmp (e->word, w, len) == 0)
        {
          e->count++;
          return;
        }
    }
}

/* ---- threads ----------------------------------------------------------- */

static size_t chunk_size;
static pthread_barrier_t start;

static void *
generator (void *arg)
{
  (void) arg;
  pthread_once (&vocab_once, build_vocab);
  pthread_barrier_wait (&start);
  long words = 0;
  for (;;)
    {
      pthread_mutex_lock (&queue.lock);
      long k = queue.next_chunk < queue.chunks ? queue.next_chunk++ : -1;
      pthread_mutex_unlock (&queue.lock);
      if (k < 0)
        break;
      struct chunk c;
      long n;
      c.text = malloc (chunk_size);
      if (c.text == NULL)
        {
          fprintf (stderr, "workload: out of memory\n");
          exit (1);
        }
      c.len = generate_chunk ((uint64_t) k, c.text, chunk_size, &n);
      words += n;
      queue_put (c);
    }
  atomic_fetch_add (&generated_words, words);
  pthread_mutex_lock (&queue.lock);
  if (plant_order_bug)
    {
      /* queue.lock, then totals_lock.  */
      pthread_mutex_lock (&totals_lock);
      generators_done++;
      pthread_mutex_unlock (&totals_lock);
    }
  if (--queue.producers == 0)
    pthread_cond_broadcast (&queue.not_empty);
  pthread_mutex_unlock (&queue.lock);
  return NULL;
}

static void *
counter (void *arg)
{
  (void) arg;
  struct stats *s = calloc (1, sizeof *s);
  local = calloc (1, sizeof *local);
  if (s == NULL || local == NULL)
    {
      fprintf (stderr, "workload: out of memory\n");
      exit (1);
    }
  pthread_setspecific (stats_key, s);
  pthread_once (&vocab_once, build_vocab);
  pthread_barrier_wait (&start);

  struct chunk c;
  while (queue_get (&c))
    {
      unsigned len = 0;
      for (size_t i = 0; i <= c.len; i++)
        {
          int ch = i < c.len ? (unsigned char) c.text[i] : ' ';
          if (isalpha (ch))
            {
              if (len < MAX_WORD)
                word_buf[len++] = (char) tolower (ch);
            }
          else if (len > 0)
            {
              local_add (s, word_buf, len);
              s->words++;
              len = 0;
            }
        }
      s->chunks++;
      s->bytes += (long) c.len;
      free (c.text);
    }
  local_flush (s);
  free (local);
  local = NULL;
  return NULL;
}

/* ---- main -------------------------------------------------------------- */

static int
by_count (const void *a, const void *b)
{
  const struct node *x = *(const struct node *const *) a;
  const struct node *y = *(const struct node *const *) b;
  if (x->count != y->count)
    return x->count < y->count ? 1 : -1;
  return strcmp (x->word, y->word);
}

int
main (int argc, char **argv)
{
  long ncpu = sysconf (_SC_NPROCESSORS_ONLN);
  long counters = ncpu > 1 ? ncpu : 2, generators = 0;
  long mib = 48, chunk_kib = 64;
  int verbose = 0, opt;
  while ((opt = getopt (argc, argv, "t:g:s:c:vB")) != -1)
    switch (opt)
      {
      case 't': counters = bench_count (argv[0], optarg); break;
      case 'g': generators = bench_count (argv[0], optarg); break;
      case 's': mib = bench_count (argv[0], optarg); break;
      case 'c': chunk_kib = bench_count (argv[0], optarg); break;
      case 'v': verbose = 1; break;
      case 'B': plant_order_bug = 1; break;
      default:
        fprintf (stderr, "usage: %s [-t COUNTERS] [-g GENERATORS] [-s MIB]"
                 " [-c CHUNK_KIB] [-v] [-B]\n", argv[0]);
        return 2;
      }
  if (generators == 0)
    generators = counters > 1 ? counters / 2 : 1;
  chunk_size = (size_t) chunk_kib * 1024;
  queue.chunks = mib * 1024 / chunk_kib;
  queue.producers = (int) generators;

  bench_print_impl ();
  for (int i = 0; i < STRIPES; i++)
    pthread_mutex_init (&stripe[i], NULL);
  int err = pthread_key_create (&stats_key, stats_destructor);
  if (err != 0)
    bench_fail ("pthread_key_create", err);
  long nthreads = counters + generators;
  err = pthread_barrier_init (&start, NULL, (unsigned) nthreads + 1);
  if (err != 0)
    bench_fail ("pthread_barrier_init", err);
  pthread_t *tid = calloc ((size_t) nthreads, sizeof *tid);
  if (tid == NULL)
    return 1;
  for (long i = 0; i < nthreads; i++)
    {
      err = pthread_create (&tid[i], NULL, i < counters ? counter : generator,
                            NULL);
      if (err != 0)
        bench_fail ("pthread_create", err);
    }
  pthread_barrier_wait (&start);
  double t0 = bench_now (), cpu0 = bench_cpu_seconds ();
  for (long i = 0; i < nthreads; i++)
    {
      err = pthread_join (tid[i], NULL);
      if (err != 0)
        bench_fail ("pthread_join", err);
    }
  double secs = bench_now () - t0, cpu = bench_cpu_seconds () - cpu0;

  /* Order-independent checksum of the final table.  */
  uint64_t sum = 0;
  long distinct = 0, words = 0;
  for (size_t b = 0; b < (1u << TABLE_BITS); b++)
    for (struct node *n = table[b]; n != NULL; n = n->next)
      {
        uint64_t st = n->hash ^ ((uint64_t) n->count << 17);
        sum += splitmix64 (&st);
        distinct++;
        words += n->count;
      }
  if (words != totals.words || words != atomic_load (&generated_words))
    {
      fprintf (stderr, "workload: counted %ld words, threads saw %ld,"
               " generated %ld\n", words, totals.words,
               atomic_load (&generated_words));
      return 1;
    }

  bench_metric ("workload_seconds", secs, "s", 0);
  bench_metric ("workload_cpu_seconds", cpu, "s", 0);
  printf ("# check checksum 0x%016llx\n", (unsigned long long) sum);
  printf ("# check words %ld\n", words);
  printf ("# check distinct %ld\n", distinct);
  printf ("# %ld counters, %ld generators, %ld MiB in %ld chunks,"
          " %.1f MiB/s, %ld merges\n", counters, generators,
          totals.bytes >> 20, totals.chunks,
          (double) totals.bytes / 1048576.0 / secs, totals.flushes);
  if (verbose)
    {
      struct node **all = malloc ((size_t) distinct * sizeof *all);
      if (all != NULL)
        {
          long i = 0;
          for (size_t b = 0; b < (1u << TABLE_BITS); b++)
            for (struct node *n = table[b]; n != NULL; n = n->next)
              all[i++] = n;
          qsort (all, (size_t) distinct, sizeof *all, by_count);
          printf ("# top words:");
          for (i = 0; i < 10 && i < distinct; i++)
            printf (" %s:%ld", all[i]->word, all[i]->count);
          printf ("\n");
          free (all);
        }
    }
  return 0;
}
