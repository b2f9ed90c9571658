"""Subcollections for the crash trials (scripts/chaos.py --subcollections):
books with reviews as folders (`<book>/reviews/r<k>.json` = document
`books/<book>/reviews/r<k>`), edited, deleted and added like the books, and
both sides enumerated with their path ids (`<book>/reviews/r<k>`).
"""

import os

INIT_ARGUMENTS = ["--subcollection", "reviews"]


def review(number, text=""):
    return '{\n  "id": "r%d",\n  "rating": %d,\n  "text": "%s"\n}\n' % (number, number, text)


def add_reviews(directory, rng, per_book=3):
    """Gives about two thirds of the books 1..per_book reviews, and one folder a book file does not have."""
    names = sorted(n[:-5] for n in os.listdir(directory) if n.endswith(".json"))
    for stem in names + ["orphan-%d" % rng.randint(0, 10**6)]:
        if rng.random() < 0.33 and not stem.startswith("orphan"):
            continue
        folder = os.path.join(directory, stem, "reviews")
        os.makedirs(folder, exist_ok=True)
        for k in range(1, rng.randint(1, per_book) + 1):
            with open(os.path.join(folder, "r%d.json" % k), "w", encoding="utf-8") as f:
                f.write(review(k))


def review_files(directory):
    """Relative paths of every review file."""
    found = []
    for entry in sorted(os.listdir(directory)):
        folder = os.path.join(directory, entry, "reviews")
        if entry.startswith(".") or not os.path.isdir(folder) or os.path.islink(os.path.join(directory, entry)):
            continue
        found += [os.path.join(entry, "reviews", n) for n in sorted(os.listdir(folder)) if n.endswith(".json") and not n.startswith(".")]
    return found


def edit_reviews(directory, rng, count):
    """Modifies, deletes and adds a few reviews."""
    files = review_files(directory)
    for relative in rng.sample(files, min(len(files), max(1, count // 10))):
        path = os.path.join(directory, relative)
        number = int(os.path.basename(relative)[1:-5])
        with open(path, "w", encoding="utf-8") as f:
            f.write(review(number, "edited"))
    for relative in rng.sample(files, min(len(files), max(1, count // 20))):
        if os.path.exists(os.path.join(directory, relative)):
            os.remove(os.path.join(directory, relative))
    add_reviews(directory, rng, per_book=1) if rng.random() < 0.5 else None


def local_records(directory):
    """Path id -> bytes of every record file, reviews included."""
    records = {n[:-5]: open(os.path.join(directory, n), "rb").read() for n in os.listdir(directory) if n.endswith(".json")}
    for relative in review_files(directory):
        records[relative[:-5]] = open(os.path.join(directory, relative), "rb").read()
    return records


def remote_reviews(client):
    """Path id -> updateTime of every review below books, by one collection-group query
    (`client`: a harness.emulator.Client of the project)."""
    answer = client.query({"from": [{"collectionId": "reviews", "allDescendants": True}],
                           "select": {"fields": [{"fieldPath": "__name__"}]}})
    prefix = client.name("books/")
    return {d["name"][len(prefix):]: d["updateTime"] for d in answer if d["name"].startswith(prefix)}
