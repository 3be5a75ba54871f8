package in

import (
	"context"
	"time"
)

// TagItem adds tags to an item. Tagging twice with the same tags changes
// nothing, and no tag is lost: the author states it.
//
//keel:tool name=tag-item version=2.2.0 effect=write destructive=false idempotent=true world=closed groups=catalog
//keel:title Tag an item
//keel:approve Tag item {item_id} with {tags}?
//keel:icon src=https://example.com/icons/tag.svg mime=image/svg+xml sizes=any
//keel:icon src=https://example.com/icons/tag-dark.png mime=image/png sizes=48x48,96x96 theme=dark
//keel:meta ui={"resourceUri": "ui://catalog/tag-form"}
func TagItem(ctx context.Context, itemID string, tags []string, weight float64, at time.Time, counts map[string]int, note *string) (Item, error) {
	return Item{ID: itemID, Tags: tags}, nil
}

// Reset2FA resets a user's second factor.
//
//keel:tool name=2fa_reset version=0.1 effect=write
func Reset2FA(ctx context.Context, userURL string) (Item, error) {
	return Item{ID: userURL, Tags: []string{}}, nil
}

// Unlink removes the link to a user; its parameters are Reset2FA's, so
// its argument struct is an alias of that one.
//
//keel:tool name=unlink version=1 effect=write
func Unlink(ctx context.Context, userURL string) (Item, error) {
	return Item{ID: userURL, Tags: []string{}}, nil
}
