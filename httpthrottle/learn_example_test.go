package httpthrottle_test

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/rxthrottle/rxthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle"
	"github.com/rxthrottle/rxthrottle/httpthrottle/throttletest"
)

// A client with no quota configured: the first answer's IETF fields say
// 5 requests a minute, and the Transport keeps that from then on. Until
// the answers bear the announcement out, it also keeps no more requests in
// flight than were accepted (1 per 1ns holds one in flight, 2 per 1ns two).
func ExampleNewLearningTransport() {
	api, _ := throttletest.NewHandler(rxthrottle.Per(5, time.Minute), throttletest.WithDialect(throttletest.DialectIETF))
	tr, err := httpthrottle.NewLearningTransport(httpthrottle.WithBase(api), // in-process, no network
		httpthrottle.WithLearnLimits(httpthrottle.OnLearn(func(ev httpthrottle.LearnEvent) {
			fmt.Println("learned", ev.Limits, "from the", ev.Source)
		})))
	if err != nil {
		fmt.Println(err)
		return
	}
	client := &http.Client{Transport: tr}
	for range 3 {
		resp, err := client.Get("http://api.example/")
		if err != nil {
			fmt.Println(err)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	fmt.Printf("%+v, %d change\n", api.Stats(), tr.LearnStats().Changes)
	// Output:
	// learned [5 per 1m0s 1 per 1ns] from the announced quota
	// learned [5 per 1m0s 2 per 1ns] from the announced quota
	// {Accepted:3 Refused:0 Dropped:0}, 2 change
}

// A ceiling the learned limits never exceed, whatever the server says
// (1 per 1ns: one request in flight until more answers bear the
// announcement out).
func ExampleLearnCeiling() {
	api, _ := throttletest.NewHandler(rxthrottle.Per(1000, time.Second), throttletest.WithDialect(throttletest.DialectIETF))
	tr, _ := httpthrottle.NewLearningTransport(httpthrottle.WithBase(api),
		httpthrottle.WithLearnLimits(httpthrottle.LearnCeiling(rxthrottle.Per(10, time.Second)),
			httpthrottle.OnLearn(func(ev httpthrottle.LearnEvent) { fmt.Println("learned", ev.Limits) })))
	resp, err := (&http.Client{Transport: tr}).Get("http://api.example/")
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = resp.Body.Close()
	// Output:
	// learned [1000 per 1s 1 per 1ns 10 per 1s]
}
