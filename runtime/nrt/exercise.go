package nrt

import (
	"bytes"
	"fmt"
)

// Exercise calls forward entry point index (in dlsym order) through its
// typed function with fixed arguments and describes the answer in one line.
// It exists for test doubles and diagnostics: communicators and handles are
// passed as nil, which a real libnccom would not accept.
func Exercise(index int) (string, error) {
	if index < 0 || index >= len(Forward) {
		return "", fmt.Errorf("forward entry point %d does not exist (0..%d)", index, len(Forward)-1)
	}
	name := Forward[index].Name
	fn, ok := exercises[name]
	if !ok {
		return "", fmt.Errorf("%s (dlsym #%d) is new in release %s and has no typed Go function yet; call its trampoline %s from C",
			name, index, Release, Forward[index].Trampoline)
	}
	return fn()
}

func cut(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

func done(err error) (string, error) { return "", err }

// exercises[i] calls the function of Forward[i].
// exercises calls each forward entry point's typed function, by symbol name:
// dlsym indices move between releases, names do not. A release's new entry
// points have no typed function until one is written; Exercise says so.
var exercises = map[string]func() (string, error){
	"neuronGetVersionInfo": func() (string, error) {
		v, err := GetVersionInfo()
		return fmt.Sprintf("version %d.%d.%d.%d-%s compat %d", v.Major, v.Minor, v.Patch, v.Maintenance, cut(v.GitHash[:]), v.CompatibilityVersion), err
	},
	"neuronGetUniqueId": func() (string, error) {
		id, err := GetUniqueID(2, "exercise")
		return fmt.Sprintf("id %q", cut(id[:])), err
	},
	"neuronInitGlobalComm": func() (string, error) {
		var dev DeviceInfo
		c, err := InitGlobalComm(0, 1, &dev, "127.0.0.1:1", "exercise")
		return fmt.Sprintf("comm set %v", c != nil), err
	},
	"neuronInitComm": func() (string, error) {
		var id UniqueID
		var dev DeviceInfo
		c, err := InitComm(1, &id, 0, &dev, false)
		return fmt.Sprintf("comm set %v", c != nil), err
	},
	"neuronBuildGraphComm": func() (string, error) { return done(BuildGraphComm(nil)) },
	"neuronGetCommInfo": func() (string, error) {
		info, err := GetCommInfo(nil)
		return fmt.Sprintf("cluster_id %d", info.ClusterID), err
	},
	"neuronFreeComm":           func() (string, error) { return done(FreeComm(nil)) },
	"neuronExpandConnectivity": func() (string, error) { return done(ExpandConnectivity(nil, ConnectivityDefault)) },
	"neuronStartNetworkProxy":  func() (string, error) { return done(StartNetworkProxy(nil, 0, 0, nil, 0, nil, 0, nil, 0)) },
	"neuronStopNetworkProxy":   func() (string, error) { return done(StopNetworkProxy(nil, 0)) },
	"neuronNetworkProxyProgress": func() (string, error) {
		p, f, err := NetworkProxyProgress(nil, 0, 0)
		return fmt.Sprintf("progressed %v failed %v", p, f), err
	},
	"neuronBootstrapSend":      func() (string, error) { return done(BootstrapSend(nil, 0, []byte("ping"), "exercise")) },
	"neuronBootstrapRecv":      func() (string, error) { return done(BootstrapRecv(nil, 0, make([]byte, 4), "exercise")) },
	"neuronBootstrapAllGather": func() (string, error) { return done(BootstrapAllGather(nil, make([]byte, 8), 4, "exercise")) },
	"neuronPreferredNcRidNic": func() (string, error) {
		nic, err := PreferredNcRidNic(0, 0)
		return fmt.Sprintf("nic %d", nic), err
	},
	"neuronPreferredNcRidNicBdf": func() (string, error) {
		bdf, err := PreferredNcRidNicBdf(0, 0)
		return fmt.Sprintf("bdf %q", bdf), err
	},
	"neuronNetRegMr": func() (string, error) {
		_, err := NetRegMr(nil, 0, 1, true, 0, nil, 0, 0)
		return done(err)
	},
	"neuronNetDeregMr": func() (string, error) { return done(NetDeregMr(nil, 0, 1, true, 0, nil)) },
	"neuronGetPeerDeviceId": func() (string, error) {
		id, err := GetPeerDeviceID(nil, 1)
		return fmt.Sprintf("peer device %d", id), err
	},
	"neuronSetAffinity": func() (string, error) {
		_, err := SetAffinity(nil, nil, 0)
		return done(err)
	},
	"neuronGetNetConnector": func() (string, error) {
		_, err := GetNetConnector(nil, 0, 1, true)
		return done(err)
	},
	"neuronInitNet":    func() (string, error) { return done(InitNet("127.0.0.1:1")) },
	"neuronFiniPlugin": func() (string, error) { return done(FiniPlugin()) },
	"neuronGetOFIHandle": func() (string, error) {
		_, err := GetOFIHandle()
		return done(err)
	},
	"neuronNetListen": func() (string, error) {
		_, err := NetListen(0, make([]byte, 128))
		return done(err)
	},
	"neuronNetConnect": func() (string, error) {
		_, err := NetConnect(0, make([]byte, 128))
		return done(err)
	},
	"neuronNetAccept": func() (string, error) {
		_, err := NetAccept(nil)
		return done(err)
	},
	"neuronNetRegMrOG": func() (string, error) {
		_, err := NetRegMrOG(nil, nil, 0, 0)
		return done(err)
	},
	"neuronNetDeregMrOG": func() (string, error) { return done(NetDeregMrOG(nil, nil)) },
	"neuronNetGetMrKey": func() (string, error) {
		k, err := NetGetMrKey(nil)
		return fmt.Sprintf("key %d", k), err
	},
	"neuronNetIsend": func() (string, error) {
		_, err := NetIsend(nil, nil, 0, nil)
		return done(err)
	},
	"neuronNetIrecv": func() (string, error) {
		_, err := NetIrecv(nil, nil, 0, nil)
		return done(err)
	},
	"neuronNetIflush": func() (string, error) {
		_, err := NetIflush(nil, nil, 0, nil)
		return done(err)
	},
	"neuronNetTest": func() (string, error) {
		d, n, err := NetTest(nil)
		return fmt.Sprintf("done %v size %d", d, n), err
	},
	"neuronNetCloseSend":   func() (string, error) { return done(NetCloseSend(nil)) },
	"neuronNetCloseRecv":   func() (string, error) { return done(NetCloseRecv(nil)) },
	"neuronNetCloseListen": func() (string, error) { return done(NetCloseListen(nil)) },
}
