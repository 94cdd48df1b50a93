package config

import "strings"

// migration renames a legacy key to its canonical one (dotted keys).
type migration struct {
	legacy, canonical string
}

// migrations are the settings renames, applied in order to every scope when
// it is read and, persisted, before every config/write edit (spec
// config/write: "existing migrations run before the edit, so deleting a
// canonical key does not resurrect its legacy alias").
//
// pi's settings.json (whose layout knightcode's agent directory follows)
// names the provider retry bounds retry.maxRetries and retry.maxDelayMs ("max
// server-requested delay before failing"); knightcode keeps them under
// retry.provider (issue 12). A canonical value already present wins and the
// legacy key is dropped.
var migrations = []migration{
	{legacy: "retry.maxRetries", canonical: "retry.provider.maxRetries"},
	{legacy: "retry.maxDelayMs", canonical: "retry.provider.maxRetryDelayMs"},
}

// migrate applies migrations to o and reports whether it changed anything.
func migrate(o *object) bool {
	changed := false
	for _, m := range migrations {
		v, ok := o.at(strings.Split(m.legacy, "."))
		if !ok {
			continue
		}
		canon := strings.Split(m.canonical, ".")
		if _, exists := o.at(canon); !exists {
			if err := o.setAt(canon, v); err != nil {
				continue // the canonical path runs through a non-object: leave both as they are
			}
		}
		o.deleteAt(strings.Split(m.legacy, "."))
		changed = true
	}
	return changed
}

// at returns the value at path.
func (o *object) at(path []string) (any, bool) {
	cur := o
	for i, seg := range path {
		v, ok := cur.get(seg)
		if !ok {
			return nil, false
		}
		if i == len(path)-1 {
			return v, true
		}
		if cur, ok = v.(*object); !ok {
			return nil, false
		}
	}
	return nil, false
}

// errNotObject is setAt's error when path runs through a value that is not
// an object; it carries the dotted prefix at fault.
type errNotObject struct{ prefix string }

func (e *errNotObject) Error() string { return e.prefix + " is not an object" }

// setAt sets the value at path, making the missing objects on the way
// (appended last in their parents). A value on the way that is not an
// object is an *errNotObject and nothing changes.
func (o *object) setAt(path []string, v any) error {
	cur := o
	for i, seg := range path[:len(path)-1] {
		next, ok := cur.get(seg)
		if !ok {
			sub := newObject()
			cur.set(seg, sub)
			cur = sub
			continue
		}
		if cur, ok = next.(*object); !ok {
			return &errNotObject{prefix: strings.Join(path[:i+1], ".")}
		}
	}
	cur.set(path[len(path)-1], v)
	return nil
}

// deleteAt removes the value at path and then the objects that this left
// empty on the way; it reports whether the value was there.
func (o *object) deleteAt(path []string) bool {
	if len(path) == 1 {
		return o.del(path[0])
	}
	next, ok := o.get(path[0])
	if !ok {
		return false
	}
	sub, ok := next.(*object)
	if !ok || !sub.deleteAt(path[1:]) {
		return false
	}
	if len(sub.keys) == 0 {
		o.del(path[0])
	}
	return true
}
